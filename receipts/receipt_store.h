// The finished receipts (issue #44): bounded by receipts.keep_count and
// receipts.keep_days, kept across restarts in the state directory
// (receipts.jsonl: one receipt per line, appended as jobs end; rewritten
// whole, atomically, when expired lines pile up), looked up by job id and
// listed by user and time for /jobs. Thread-safe: the sweep thread adds,
// the HTTP threads read (a lookup never waits on the disk).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "receipts/job_receipt.h"

namespace ibfx {

struct ReceiptQuery {
  std::string user;  // empty: any
  double since = 0;  // receipts of jobs that ended at or after (Unix seconds)
  std::size_t limit = 100;
};

struct ReceiptStoreStats {
  std::size_t receipts = 0;
  std::size_t memory_bytes = 0;
  std::size_t file_bytes = 0;
  std::uint64_t write_failures = 0;
};

class ReceiptStore {
 public:
  // `directory` empty: kept in memory only. Reads what a previous run
  // saved (a torn last line or a bad line is logged and skipped, never
  // fatal).
  ReceiptStore(std::string directory, ReceiptsConfig config);
  ~ReceiptStore();
  ReceiptStore(const ReceiptStore&) = delete;
  ReceiptStore& operator=(const ReceiptStore&) = delete;

  // Sweep thread: receipts just finished (a job id already stored is
  // replaced). Never blocks on the disk for long: appended by the writer.
  void add(std::vector<JobReceipt> receipts, double now);

  std::optional<JobReceipt> find(std::uint64_t job_id) const;
  // Newest end first.
  std::vector<JobReceipt> list(const ReceiptQuery& query) const;

  void reload(const ReceiptsConfig& config);
  ReceiptStoreStats stats() const;
  void stop();  // writes what is pending

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ibfx
