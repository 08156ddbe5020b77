// The endpoints of the status page's history (issue #35): the page and
// /status.json as they were at a past sweep (?at=UNIX_SECONDS), and
// /history.json?from=&to=&step=. Rendered per request from the history the
// publication carries (no MAD, no lock on the pipeline): a few ms.
#pragma once

#include <string>
#include <string_view>

#include "base/utc_time.h"
#include "daemon/scrape_query.h"
#include "pipeline/publication.h"
#include "receipts/job_receipt.h"

namespace ibfx {

struct HistoryAnswer {
  int status = 200;  // 400: a bad query; 404: the history does not reach back
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  bool status_page = false;  // an HTML page or status.json: the page's CSP applies
};

// Whether the page or status.json must be rendered for this request
// (?at=, ?window=) rather than served as the publisher rendered it.
bool wants_history(const ScrapeQuery& query);

// GET /?at=&window= (`html`) or /status.json?at=: with ?at= the sweep
// nearest before it; with ?window= (1h, 6h, 24h) the heatmap over that
// window. An ?at= after the last sweep shows the newest one and says so;
// one before the history starts, or more than a day after `now` (the
// daemon's clock), is a 404 saying which, with the times the history
// holds; one that is not a time up to 9999-12-31 a 400.
HistoryAnswer status_view(const Publication& pub, const ScrapeQuery& query, bool html,
                          std::string_view telemetry_path, double now = unix_seconds_now());

// GET /?job=ID: a Slurm job's page, what the history kept of it and, for a
// job that ended, `receipt` (issue #44) first. A 400 for an ID that is not
// a number, a 404 when neither knows the job.
HistoryAnswer job_view(const Publication& pub, std::string_view job,
                       std::string_view telemetry_path, const JobReceipt* receipt);

// GET /history.json: `from` defaults to an hour before `to`, `to` to the
// newest frame, `step` to 0 (as kept).
HistoryAnswer history_json(const Publication& pub, const ScrapeQuery& query);

}  // namespace ibfx
