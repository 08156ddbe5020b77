// A real Slurm on this machine for one test (Debian 12's slurmctld, slurmd,
// slurmrestd, slurm-client and munge): its own temp dir, munge key and
// socket, free TCP ports, one slurmd per node (`slurmd -N <name>`, every
// node NodeAddr=127.0.0.1 with its own Port=), and slurmrestd as user
// nobody on a unix socket (rest_auth/local, openapi/v0.0.38; it refuses to
// run as root). Nothing of the machine's own Slurm or munge is used or
// touched: every client gets SLURM_CONF of this cluster.
//
// Torn down by the destructor, also when a test fails: jobs cancelled,
// daemons terminated (SIGTERM, then SIGKILL), and every process left
// whose working directory is in the cluster's dir (slurmstepd and the
// jobs' own processes, which slurmd double-forks away from its process
// group) killed, then the dir removed.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "test/sim/sim_fabric.h"

namespace ibfx::test {

class SlurmCluster {
 public:
  // Brings up munged, slurmctld, one slurmd per name in `nodes` (all in
  // partition "gpu"), and slurmrestd; waits until every node is idle.
  // Throws std::runtime_error (with the daemons' logs) after cleaning up.
  // `extra_config`: lines appended to slurm.conf (HealthCheckProgram=...).
  explicit SlurmCluster(std::vector<std::string> nodes, std::string extra_config = {});
  ~SlurmCluster();
  SlurmCluster(const SlurmCluster&) = delete;
  SlurmCluster& operator=(const SlurmCluster&) = delete;

  const std::string& dir() const { return dir_; }
  const std::string& conf_path() const { return conf_; }
  // slurmrestd's listener: "unix://<dir>/rest/slurmrestd.sock".
  std::string rest_url() const { return "unix://" + rest_socket_; }
  // What a Slurm client (squeue, the daemon) needs: SLURM_CONF and PATH.
  EnvMap env() const;

  // `sbatch --parsable -N <n> -w <hosts> -J <name> --wrap "sleep 600"`;
  // returns the job id (throws on failure).
  std::uint64_t submit(const std::string& name, const std::vector<std::string>& hosts);
  // True once squeue shows `job` in state `state` (e.g. "RUNNING"), within `timeout`.
  bool wait_state(std::uint64_t job, const std::string& state,
                  std::chrono::milliseconds timeout = std::chrono::seconds(15));
  // True once squeue no longer lists `job`.
  bool wait_gone(std::uint64_t job, std::chrono::milliseconds timeout = std::chrono::seconds(15));
  void cancel(std::uint64_t job);
  // SIGKILL to slurmrestd: a job source that stops answering.
  void kill_slurmrestd();
  // A Slurm client command in this cluster (squeue, sbatch, ...).
  RunResult run(const std::vector<std::string>& argv,
                std::chrono::milliseconds timeout = std::chrono::seconds(10)) const;

 private:
  Process& start(const std::string& name, std::vector<std::string> argv);
  void write_config(const std::vector<std::string>& nodes, const std::string& extra_config);
  void teardown();
  std::string logs() const;

  std::string dir_;
  std::string conf_;
  std::string munge_socket_;
  std::string rest_socket_;
  std::vector<std::string> nodes_;
  std::vector<std::pair<std::string, Process>> daemons_;  // in start order: munged first
};

}  // namespace ibfx::test
