#include "daemon/history_view.h"

#include <charconv>
#include <cmath>

#include "base/utc_time.h"
#include "history/history_json.h"
#include "views/history_job_view.h"
#include "views/history_status_model.h"
#include "views/status_html.h"
#include "views/status_json.h"

namespace ibfx {
namespace {

HistoryAnswer refused(int status, std::string text) {
  HistoryAnswer a;
  a.status = status;
  a.body = std::move(text) + "\n";
  return a;
}

HistoryAnswer no_history() {
  return refused(404, "this daemon keeps no status page history (it has not published a sweep)");
}

std::string seconds_text(double t) { return std::to_string(static_cast<long long>(t)); }

// ?at= in the future: no sweep answers it. Said with the newest sweep, the
// one the page shows without ?at=.
HistoryAnswer after_history(const HistoryFrames& history, double at, const std::string& at_text) {
  const double newest = history.frames.back()->time;
  return refused(404, "at=" + at_text + " (" + utc_time_text(at) +
                          " UTC) is in the future: the status page history ends at the newest "
                          "sweep, " +
                          utc_time_text(newest) + " UTC (" + seconds_text(newest) +
                          "), which the page shows without ?at=");
}

}  // namespace

bool wants_history(const ScrapeQuery& query) { return !query.at.empty() || !query.window.empty(); }

HistoryAnswer job_view(const Publication& pub, std::string_view job,
                       std::string_view telemetry_path, const JobReceipt* receipt) {
  std::uint64_t id = 0;
  const char* end = job.data() + job.size();
  const auto [ptr, ec] = std::from_chars(job.data(), end, id);
  if (ec != std::errc() || ptr != end) return refused(400, "job must be a Slurm job id");
  if (!pub.history && !receipt) return no_history();
  HistoryAnswer a;
  a.body = render_job_html(pub.history, id, telemetry_path, receipt);
  if (a.body.empty()) {
    return refused(404, "job " + std::string(job) +
                            " is not in the status page history, nor among the receipts");
  }
  a.content_type = "text/html; charset=utf-8";
  a.status_page = true;
  return a;
}

HistoryAnswer status_view(const Publication& pub, const ScrapeQuery& query, bool html,
                          std::string_view telemetry_path, double now) {
  double window = 3600;
  if (!query.window.empty()) {
    // 5m: sweep resolution (5 s columns) for the last minutes of an
    // incident as it unfolds.
    if (query.window == "5m") {
      window = 5 * 60;
    } else if (query.window == "6h") {
      window = 6 * 3600;
    } else if (query.window == "24h") {
      window = 24 * 3600;
    } else if (query.window != "1h") {
      return refused(400, "window must be 5m, 1h, 6h or 24h");
    }
  }
  StatusModel m;
  if (query.at.empty()) {
    if (!pub.status_model) return no_history();
    m = *pub.status_model;
  } else {
    std::string error;
    const auto when = parse_unix_seconds("at", query.at, error);
    if (!when) return refused(400, error);
    if (!pub.history) return no_history();
    // A day past now is no link of the page (its newest column may end in
    // the future, by at most one 24h-window column): a typo or a time in
    // milliseconds, said so. Up to then, the newest sweep, said so.
    if (*when > now + 86400 && !pub.history->frames.empty()) {
      return after_history(*pub.history, *when, query.at);
    }
    const HistoryFramePtr frame = pub.history->at(*when);
    if (!frame) {
      if (pub.history->frames.empty()) return refused(404, "the status page history is empty");
      const double oldest = pub.history->frames.front()->time;
      return refused(404, "the status page history reaches back to " + utc_time_text(oldest) +
                              " UTC (" + std::to_string(static_cast<long long>(oldest)) +
                              "), not to at=" + query.at);
    }
    m = history_status_model(*frame, *when, pub.snapshot->events.get());
    m.as_of->newest = frame == pub.history->frames.back();
    m.telemetry_path = std::string(telemetry_path);
    m.history = pub.history;
  }
  m.history_window_seconds = window;
  HistoryAnswer a;
  a.status_page = true;
  if (html) {
    a.content_type = "text/html; charset=utf-8";
    a.body = render_status_html(m);
  } else {
    a.content_type = "application/json";
    a.body = render_status_json(m);
  }
  return a;
}

HistoryAnswer history_json(const Publication& pub, const ScrapeQuery& query) {
  if (!pub.history) return no_history();
  std::string error;
  const auto& frames = pub.history->frames;
  double to = frames.empty() ? pub.snapshot->sweep_timestamp_seconds : frames.back()->time;
  if (!query.to.empty()) {
    const auto t = parse_unix_seconds("to", query.to, error);
    if (!t) return refused(400, error);
    to = *t;
  }
  double from = to - 3600;
  if (!query.from.empty()) {
    const auto f = parse_unix_seconds("from", query.from, error);
    if (!f) return refused(400, error);
    from = *f;
  }
  if (from > to) return refused(400, "from must not be after to");
  double step = 0;
  if (!query.step.empty()) {
    const char* end = query.step.data() + query.step.size();
    const auto [ptr, ec] = std::from_chars(query.step.data(), end, step);
    if (ec != std::errc() || ptr != end || !std::isfinite(step) || step < 0 || step > 86400) {
      return refused(400, "step must be seconds from 0 (as kept) to 86400");
    }
  }
  HistoryAnswer a;
  a.content_type = "application/json";
  a.body = render_history_json(*pub.history, from, to, step);
  a.status_page = true;
  return a;
}

}  // namespace ibfx
