// /jobs/<id> and /jobs?user=&since=&limit= (issue #44, docs/receipts.md
// "Endpoints"): a Slurm job's fabric receipt as JSON (receipt_to_json, with
// "running"), or as text (?format=text, receipt_to_text) for curl and the
// job-receipt client; the list of finished receipts. Rendered per request
// from the ReceiptStore (thread-safe) and, for a running job, the receipt
// it would get if it ended now (the daemon's peek). Errors are JSON
// ({"error": ...}) or one text line; a query value is never echoed raw.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "receipts/job_receipt.h"
#include "receipts/receipt_store.h"

namespace ibfx {

struct ReceiptAnswer {
  int status = 200;
  std::string content_type;
  std::string body;
};

inline constexpr std::size_t kReceiptListMax = 1000;  // /jobs?limit= at most

// A Slurm job id as /jobs/<id> and /?job= take it: 1 to 20 decimal digits,
// not 0, within 64 bits; nullopt otherwise.
std::optional<std::uint64_t> parse_job_id(std::string_view text);

// An error as the format asked for: {"error": message} or the message on
// one line. `message` must not hold raw request text.
ReceiptAnswer receipt_error(int status, const std::string& message, bool text);

// One receipt: `running` says it is a running job's would-be receipt.
ReceiptAnswer render_receipt(const JobReceipt& receipt, bool running, bool text);

// /jobs?user=&since=&limit=: the query checked (user: a Slurm user name,
// 1 to 64 letters, digits, '.', '-' or '_'; since: Unix seconds; limit: 1
// to kReceiptListMax), or nullopt and `error`.
std::optional<ReceiptQuery> parse_receipt_query(const std::string& user, const std::string& since,
                                                const std::string& limit, std::string& error);
// The list, newest end first as the store gives it: JSON {"receipts":
// [...], "count": n} or one line per receipt.
ReceiptAnswer render_receipt_list(const std::vector<JobReceipt>& receipts, bool text);

// What a request to /jobs or /jobs/<id> asks, as the daemon parsed it.
struct JobsRequest {
  std::string_view path;                   // "/jobs" or "/jobs/<id>"
  std::string user, since, limit, format;  // query values, decoded
};
// The running job's receipt if it ended at the request (false: not running).
using RunningReceipt = std::function<bool(std::uint64_t job_id, JobReceipt& out)>;
// The whole endpoint: checks, the store's receipt, else the running one,
// else 404. `on`: receipts are on (said in the 404 when they are not).
ReceiptAnswer serve_jobs(const JobsRequest& request, const ReceiptStore& store,
                         const RunningReceipt& running, bool on);

}  // namespace ibfx
