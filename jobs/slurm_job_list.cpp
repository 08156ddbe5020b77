#include "jobs/slurm_job_list.h"

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "base/log_text.h"
#include "jobs/hostlist.h"

namespace ibfx {
namespace {

using Json = nlohmann::json;

// Deeper than any Slurm record; a deeper document is not a job list.
constexpr std::size_t kMaxDepth = 64;

// The fields of one record as read, before it is known to be running.
struct Record {
  std::optional<std::uint64_t> job_id;
  std::string name, user, partition, state, nodes;
  bool has_nodes = false;
  std::int64_t start_time = 0;
  std::int64_t end_time = 0;
};

// The states (the first of v0.0.39's list) of a job that ran and ended:
// its end_time is when. A pending, running or suspended job's end_time is
// its time limit, not an end.
bool ended_state(std::string_view state) {
  constexpr std::array<std::string_view, 10> kEnded = {
      "COMPLETING", "COMPLETED", "CANCELLED", "FAILED",   "TIMEOUT",
      "NODE_FAIL",  "PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY"};
  return std::find(kEnded.begin(), kEnded.end(), state) != kEnded.end();
}

// Depth 1 is the document's object, 2 its "jobs" (or "errors") list, 3 one
// record, 4 a value nested in a record (job_state's list, start_time's
// object); everything else is skipped.
class JobListSax {
 public:
  JobListSax(const JobListLimits& limits, JobList& out) : limits_(limits), out_(out) {}

  bool null() { return scalar(); }
  bool boolean(bool) { return scalar(); }
  bool number_integer(Json::number_integer_t v) {
    return number(v < 0 ? 0 : static_cast<std::uint64_t>(v), v);
  }
  bool number_unsigned(Json::number_unsigned_t v) {
    return number(v, static_cast<std::int64_t>(std::min<std::uint64_t>(v, INT64_MAX)));
  }
  bool number_float(Json::number_float_t v, const std::string&) {
    // Slurm writes integers; a float job_id is not a job id.
    if (in_record_field("start_time") && v > 0 && v < 1e15)
      record_.start_time = static_cast<std::int64_t>(v);
    if (in_record_field("end_time") && v > 0 && v < 1e15)
      record_.end_time = static_cast<std::int64_t>(v);
    return scalar();
  }
  bool string(std::string& v) {
    if (in_errors() && (key_ == "error" || key_ == "description") && error_text_.empty()) {
      error_text_ = v;
    } else if (depth() == 3 && in_jobs_) {
      if (key_ == "name")
        record_.name = cut(v);
      else if (key_ == "user_name")
        record_.user = cut(v);
      else if (key_ == "partition")
        record_.partition = cut(v);
      else if (key_ == "job_state")
        record_.state = cut(v);
      else if (key_ == "nodes") {
        record_.nodes = std::move(v);
        record_.has_nodes = true;
      }
    } else if (depth() == 4 && in_jobs_ && parent_key_ == "job_state" && stack_.back() == '[' &&
               record_.state.empty()) {
      record_.state = cut(v);  // v0.0.39+: ["RUNNING", "COMPLETING", ...]
    }
    return scalar();
  }
  bool binary(Json::binary_t&) { return scalar(); }

  bool start_object(std::size_t) {
    if (!push('{')) return false;
    if (depth() == 1) return true;
    if (depth() == 3 && in_jobs_) record_ = Record{};
    if (depth() == 4) parent_key_ = key_;
    return true;
  }
  bool end_object() {
    if (depth() == 3 && in_jobs_ && !finish_record()) return false;
    return pop();
  }
  bool start_array(std::size_t) {
    if (depth() == 1 && (key_ == "jobs" || key_ == "errors")) {
      if (key_ == "jobs") saw_jobs_ = true;
      in_jobs_ = key_ == "jobs";
      in_errors_list_ = key_ == "errors";
    } else if (depth() == 3) {
      parent_key_ = key_;
    }
    if (depth() == 0) {
      out_.error = "expected a JSON object with a \"jobs\" list, got a list";
      return false;
    }
    return push('[');
  }
  bool end_array() {
    if (depth() == 2) in_jobs_ = in_errors_list_ = false;
    return pop();
  }
  bool key(std::string& k) {
    key_ = std::move(k);
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) {
    if (out_.error.empty()) {
      // e.what() quotes the offending token: untrusted text, escaped.
      out_.error =
          "malformed JSON at byte " + std::to_string(position) + ": " + printable(e.what());
    }
    return false;
  }

  bool saw_jobs() const { return saw_jobs_; }
  const std::string& error_text() const { return error_text_; }

 private:
  std::size_t depth() const { return stack_.size(); }
  bool in_errors() const { return in_errors_list_ && depth() == 3; }
  bool in_record_field(std::string_view field) const {
    if (!in_jobs_) return false;
    if (depth() == 3) return key_ == field;
    // v0.0.39+: "start_time": {"set": true, "infinite": false, "number": N}
    return depth() == 4 && stack_.back() == '{' && parent_key_ == field && key_ == "number";
  }

  bool push(char kind) {
    if (depth() == 0 && kind != '{') return false;
    if (stack_.size() >= kMaxDepth) {
      out_.error = "JSON nested deeper than " + std::to_string(kMaxDepth) + " levels";
      return false;
    }
    stack_.push_back(kind);
    return true;
  }
  bool pop() {
    stack_.pop_back();
    return true;
  }
  bool scalar() {
    if (depth() == 0) {
      out_.error = "expected a JSON object with a \"jobs\" list, got a single value";
      return false;
    }
    return true;
  }
  bool number(std::uint64_t u, std::int64_t s) {
    if (in_record_field("job_id") && depth() == 3 && u > 0) record_.job_id = u;
    if (in_record_field("start_time") && s > 0) record_.start_time = s;
    if (in_record_field("end_time") && s > 0) record_.end_time = s;
    return scalar();
  }

  std::string cut(const std::string& v) const {
    return v.size() <= limits_.max_field_bytes ? v : v.substr(0, limits_.max_field_bytes);
  }

  void bad(const std::string& why) {
    if (out_.bad_records++ == 0) out_.first_bad_record = why;
  }

  bool finish_record() {
    ++out_.records;
    if (record_.state != "RUNNING") {
      if (record_.job_id && record_.end_time > 0 && ended_state(record_.state) &&
          out_.ended.size() < limits_.max_ended) {
        out_.ended.push_back({*record_.job_id, record_.end_time});
      }
      return true;
    }
    if (!record_.job_id) {
      bad("a running job without a job_id");
      return true;
    }
    const std::string id = std::to_string(*record_.job_id);
    if (!record_.has_nodes || record_.nodes.empty()) {
      bad("job " + id + ": running without nodes");
      return true;
    }
    if (out_.jobs.size() >= limits_.max_jobs) {
      out_.error = "more than " + std::to_string(limits_.max_jobs) +
                   " running jobs (jobs.max_jobs): the list is not used";
      return false;
    }
    HostlistExpansion hosts =
        expand_hostlist(record_.nodes, limits_.max_hosts - std::min(limits_.max_hosts, hosts_));
    if (!hosts.ok()) {
      bad("job " + id + ": nodes: " + hosts.error);
      return true;
    }
    hosts_ += hosts.hosts.size();
    SlurmJob job;
    job.job_id = *record_.job_id;
    job.name = std::move(record_.name);
    job.user = std::move(record_.user);
    job.partition = std::move(record_.partition);
    job.hosts = std::move(hosts.hosts);
    job.start_time = record_.start_time;
    out_.jobs.push_back(std::move(job));
    return true;
  }

  const JobListLimits& limits_;
  JobList& out_;
  std::vector<char> stack_;  // '{' or '[' per open container
  std::string key_;          // the last key read
  std::string parent_key_;   // the record's key holding the nested value being read
  bool in_jobs_ = false;
  bool in_errors_list_ = false;
  bool saw_jobs_ = false;
  std::string error_text_;
  Record record_;
  std::size_t hosts_ = 0;
};

}  // namespace

JobList parse_slurm_job_list(std::string_view json, const JobListLimits& limits) {
  JobList out;
  JobListSax sax(limits, out);
  const bool parsed = Json::sax_parse(json.begin(), json.end(), &sax);
  if (!parsed && out.error.empty()) out.error = "not a JSON object";
  if (out.error.empty() && !sax.saw_jobs()) {
    out.error = sax.error_text().empty()
                    ? "no \"jobs\" list in the answer"
                    : "the server answered with an error: " + quote(sax.error_text());
  }
  if (!out.ok()) {
    out.jobs.clear();
    out.ended.clear();
  }
  return out;
}

}  // namespace ibfx
