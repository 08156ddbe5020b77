// One GET of slurmrestd's job list: /slurm/<api_version>/jobs over a unix
// socket (rest_auth/local: slurmrestd trusts the peer's uid) or over
// http(s)://host:port with a JWT (rest_auth/jwt: headers X-SLURM-USER-NAME
// and X-SLURM-USER-TOKEN), through http/http_get.h: one connection per
// request, the whole exchange bounded by jobs.timeout. Runs on the job
// source's thread, never on a sweep's or a scrape's.
#pragma once

#include <cstddef>
#include <string>

#include "config/config.h"

namespace ibfx {

// One fetch of Slurm's job list (slurmrestd or squeue): its JSON, or why not.
struct JobListFetch {
  std::string body;   // the answer's body when ok()
  std::string error;  // empty: fetched; else for the log (no token in it)
  bool ok() const { return error.empty(); }
};

// A body larger than this is refused (a 100k-job list of Slurm 22.05 is
// about 300 MB with every field; slurmrestd cannot be asked for fewer).
inline constexpr std::size_t kMaxJobListBytes = std::size_t{512} << 20;

class SlurmrestdClient {
 public:
  explicit SlurmrestdClient(const JobsConfig& config) : config_(config) {}
  // `token`: the JWT, empty over a unix socket.
  JobListFetch fetch(const std::string& token) const;

 private:
  JobsConfig config_;
};

}  // namespace ibfx
