#include "api/receipt_view.h"

#include <charconv>
#include <nlohmann/json.hpp>

#include "analysis/json_fields.h"
#include "base/log_text.h"
#include "base/utc_time.h"
#include "receipts/receipt_json.h"

namespace ibfx {
namespace {

using nlohmann::json;

constexpr std::string_view kJsonType = "application/json";
constexpr std::string_view kTextType = "text/plain; charset=utf-8";
constexpr std::size_t kUserMax = 64;

// receipt_to_json's object, with whether the job still runs. The JSON is
// the receipts layer's (receipt_json.h); only "running" is added here.
json receipt_object(const JobReceipt& receipt, bool running) {
  json j = json::parse(receipt_to_json(receipt), nullptr, false);
  if (!j.is_object()) j = json::object();  // never: receipt_to_json writes an object
  j["running"] = running;
  return j;
}

bool valid_user(std::string_view user) {
  if (user.empty() || user.size() > kUserMax) return false;
  for (const char c : user) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

std::optional<std::uint64_t> parse_job_id(std::string_view text) {
  if (text.empty() || text.size() > 20 || text.front() == '0') return std::nullopt;
  std::uint64_t id = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, id);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return id;
}

ReceiptAnswer receipt_error(int status, const std::string& message, bool text) {
  ReceiptAnswer a;
  a.status = status;
  if (text) {
    a.content_type = std::string(kTextType);
    a.body = message + "\n";
  } else {
    a.content_type = std::string(kJsonType);
    json j;
    j["error"] = message;
    a.body = json_fields::dump(j) + "\n";
  }
  return a;
}

ReceiptAnswer render_receipt(const JobReceipt& receipt, bool running, bool text) {
  ReceiptAnswer a;
  if (text) {
    a.content_type = std::string(kTextType);
    // receipt_to_text makes Slurm's names safe for a terminal.
    a.body = receipt_to_text(receipt);
    if (running) a.body = "running: the receipt it would get if it ended now\n" + a.body;
  } else {
    a.content_type = std::string(kJsonType);
    a.body = json_fields::dump(receipt_object(receipt, running)) + "\n";
  }
  return a;
}

std::optional<ReceiptQuery> parse_receipt_query(const std::string& user, const std::string& since,
                                                const std::string& limit, std::string& error) {
  ReceiptQuery q;
  if (!user.empty()) {
    if (!valid_user(user)) {
      error = "user must be a Slurm user name: 1 to 64 letters, digits, '.', '-' or '_'";
      return std::nullopt;
    }
    q.user = user;
  }
  if (!since.empty()) {
    const auto when = parse_unix_seconds("since", since, error);
    if (!when) return std::nullopt;
    q.since = *when;
  }
  if (!limit.empty()) {
    std::size_t n = 0;
    const char* end = limit.data() + limit.size();
    const auto [ptr, ec] = std::from_chars(limit.data(), end, n);
    if (ec != std::errc() || ptr != end || n == 0 || n > kReceiptListMax) {
      error = "limit must be a number from 1 to " + std::to_string(kReceiptListMax);
      return std::nullopt;
    }
    q.limit = n;
  }
  return q;
}

ReceiptAnswer render_receipt_list(const std::vector<JobReceipt>& receipts, bool text) {
  ReceiptAnswer a;
  if (text) {
    // One line each: id, verdict, end (UTC), user (made safe), the line
    // (printable ASCII by judge_receipt; made safe again all the same).
    a.content_type = std::string(kTextType);
    for (const JobReceipt& r : receipts) {
      const std::string end = utc_time_text(r.end);
      a.body += std::to_string(r.job_id) + " " + std::string(receipt_verdict_name(r.verdict)) +
                " " + (end.empty() ? "-" : end) + (r.end_known ? "" : "?") +
                " user=" + printable(r.user, kUserMax) + " " + printable(r.line, kReceiptLineMax) +
                "\n";
    }
    return a;
  }
  a.content_type = std::string(kJsonType);
  json list = json::array();
  for (const JobReceipt& r : receipts) list.push_back(receipt_object(r, false));
  json j;
  j["count"] = receipts.size();
  j["receipts"] = std::move(list);
  a.body = json_fields::dump(j) + "\n";
  return a;
}

ReceiptAnswer serve_jobs(const JobsRequest& request, const ReceiptStore& store,
                         const RunningReceipt& running, bool on) {
  if (!request.format.empty() && request.format != "text" && request.format != "json") {
    return receipt_error(400, "format must be text or json", false);
  }
  const bool text = request.format == "text";
  if (request.path == "/jobs" || request.path == "/jobs/") {
    std::string error;
    const auto q = parse_receipt_query(request.user, request.since, request.limit, error);
    if (!q) return receipt_error(400, error, text);
    return render_receipt_list(store.list(*q), text);
  }
  const std::string_view id_text = request.path.substr(std::string_view("/jobs/").size());
  const auto id = parse_job_id(id_text);
  if (!id) {
    return receipt_error(400, "a job id is 1 to 20 digits, not starting with 0 (/jobs/4711)", text);
  }
  if (const auto stored = store.find(*id)) return render_receipt(*stored, false, text);
  JobReceipt now;
  if (running && running(*id, now)) return render_receipt(now, true, text);
  return receipt_error(404,
                       "no receipt for job " + std::to_string(*id) +
                           (on ? ": it is not running and no receipt of it is kept"
                               : ": job receipts are off (jobs.source none, or receipts.enabled "
                                 "false)"),
                       text);
}

}  // namespace ibfx
