#include "jobs/slurmrestd_client.h"

#include <chrono>

#include "base/log_text.h"
#include "http/http_get.h"

namespace ibfx {
namespace {

// An answer other than 200, for the log: untrusted text, escaped.
std::string describe(unsigned status, const std::string& body) {
  constexpr std::size_t kBodyShown = 200;
  return "HTTP " + std::to_string(status) +
         (status == 401 || status == 403 ? " (token or user name refused)" : "") +
         (body.empty() ? "" : ": " + quote(body, kBodyShown));
}

}  // namespace

JobListFetch SlurmrestdClient::fetch(const std::string& token) const {
  HttpGetRequest request;
  request.url = config_.url;
  request.target = "/slurm/" + config_.api_version + "/jobs";
  request.headers = {{"Accept", "application/json"}};
  if (!token.empty()) {
    request.headers.emplace_back("X-SLURM-USER-NAME", config_.user_name);
    request.headers.emplace_back("X-SLURM-USER-TOKEN", token);
  }
  request.body_limit = kMaxJobListBytes;
  request.deadline = std::chrono::steady_clock::now() + config_.timeout;
  HttpGetResult answer = http_get(request);
  auto failed = [&](const std::string& what) {
    return JobListFetch{{}, "slurmrestd " + answer.where + ": " + what};
  };
  switch (answer.outcome) {
    case HttpGetResult::Outcome::kTimedOut:
      return failed("no answer within " + format_duration(config_.timeout));
    case HttpGetResult::Outcome::kFailed:
      return failed(answer.error);
    case HttpGetResult::Outcome::kAnswered:
      break;
  }
  if (answer.status != 200) return failed(describe(answer.status, answer.body));
  return JobListFetch{std::move(answer.body), {}};
}

}  // namespace ibfx
