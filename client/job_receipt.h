// `ibfabric_exporter job-receipt --job ID`: a Slurm job's fabric receipt
// (issue #44, docs/receipts.md "Into Slurm") fetched from the daemon's
// /jobs/<id>, for an EpilogSlurmctld script. The daemon finishes a receipt
// within one sweep and one job-source poll of the job leaving the running
// list, so the client polls until the receipt is an ended job's (or --wait
// runs out), prints its one line, and with --set-comment writes it into
// the job's Slurm field (--field, AdminComment by default) with
// `scontrol update JobId=ID <field>=<line>`; with --running, a running
// job's receipt as of now is taken at once (Slurm refuses to update an
// ended job: the batch script's last step sets it): exec'd with its arguments,
// never through a shell, the line made safe for scontrol whatever the
// daemon sent (printable ASCII, no quotes).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "client/check_node.h"
#include "http/http_get.h"

namespace ibfx {

inline constexpr int kReceiptPrinted = 0;    // the line printed (and set)
inline constexpr int kReceiptNotYet = 1;     // --wait ran out: still running, or unknown
inline constexpr int kReceiptNoDaemon = 2;   // the daemon could not be asked, or said garbage
inline constexpr int kReceiptSetFailed = 3;  // scontrol failed

struct JobReceiptOptions {
  std::uint64_t job_id = 0;
  std::string url = "http://127.0.0.1:9690";
  std::chrono::milliseconds wait{60000};  // for an ended job's receipt
  std::chrono::milliseconds poll{2000};   // between two GETs
  // A running job's receipt as of now is enough: Slurm 22.05 refuses to
  // update a job that ended, so the job's own last step sets its field.
  bool running = false;
  bool set_comment = false;
  std::string field = "AdminComment";  // or Comment
  std::string user;                    // basic auth (the daemon's web config)
  std::string password_file;
  std::string ca_file;
  std::string scontrol = "/usr/bin/scontrol";
};

// Parses argv[2...] (argv[1] is "job-receipt"); nullopt with `error` set.
// Without --job, SLURM_JOB_ID (EpilogSlurmctld's environment).
std::optional<JobReceiptOptions> parse_job_receipt_args(int argc, char** argv, std::string& error);

// What one GET of /jobs/<id> said.
struct ReceiptReply {
  enum class State : std::uint8_t { kEnded, kRunning, kUnknownJob, kNoAnswer };
  State state = State::kNoAnswer;
  std::string line;   // kEnded, kRunning: the receipt's line, made safe (slurm_safe_text)
  std::string error;  // kNoAnswer, kUnknownJob: why, one line
};
ReceiptReply read_receipt_reply(const HttpGetResult& got);

// The mode: returns the exit status. `get`, `run` and `sleep` are the
// network, the processes and the clock (tests pass fakes).
int run_job_receipt(const JobReceiptOptions& options,
                    const std::function<HttpGetResult(const HttpGetRequest&)>& get,
                    const CommandRunner& run,
                    const std::function<void(std::chrono::milliseconds)>& sleep);
// main(): argv[1] == "job-receipt".
bool is_job_receipt_invocation(int argc, char** argv);
int job_receipt_main(int argc, char** argv);

}  // namespace ibfx
