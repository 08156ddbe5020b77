#include "receipts/receipt_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <thread>
#include <unordered_map>
#include <utility>

#include "base/atomic_file.h"
#include "base/log.h"
#include "base/log_text.h"
#include "base/thread_name.h"
#include "base/utc_time.h"
#include "receipts/receipt_json.h"

namespace ibfx {

namespace {

constexpr const char* kFileName = "/receipts.jsonl";
// A std::map node and an unordered_map entry per receipt, about.
constexpr std::size_t kIndexBytes = 96;

// Appends `text` to the file at `path`, created when missing.
bool append_file(const std::string& path, const std::string& text, std::string& error) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
  if (fd < 0) {
    error = "open " + path + ": " + std::strerror(errno);
    return false;
  }
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = "write " + path + ": " + std::strerror(errno);
      ::close(fd);
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  return true;
}

}  // namespace

struct ReceiptStore::Impl {
  using Key = std::pair<double, std::uint64_t>;  // (end, job id)

  std::string path;  // empty: memory only
  ReceiptsConfig config;

  mutable std::mutex mutex;  // everything below
  std::map<Key, JobReceipt> by_end;
  std::unordered_map<std::uint64_t, double> end_of;
  std::size_t memory = 0;
  double last_now = 0;
  // The file: lines in it (live or dead), its bytes, lines to append, and
  // whether it is to be written whole (dead lines over half, a torn line).
  std::size_t file_lines = 0;
  std::size_t file_bytes = 0;
  std::string pending;
  std::size_t pending_lines = 0;
  bool rewrite = false;
  bool stopping = false;
  std::uint64_t write_failures = 0;
  std::condition_variable wake;
  std::thread writer;

  void erase(std::map<Key, JobReceipt>::iterator it) {
    memory -= receipt_memory_bytes(it->second) + kIndexBytes;
    end_of.erase(it->first.second);
    by_end.erase(it);
  }

  void insert(JobReceipt r) {
    if (const auto old = end_of.find(r.job_id); old != end_of.end()) {
      erase(by_end.find({old->second, r.job_id}));
    }
    memory += receipt_memory_bytes(r) + kIndexBytes;
    end_of[r.job_id] = r.end;
    const Key key{r.end, r.job_id};
    by_end.emplace(key, std::move(r));
  }

  // Oldest first, past keep_count or keep_age.
  void bound(double now) {
    const double oldest = now - seconds_of(config.keep_age);
    while (!by_end.empty() &&
           (by_end.size() > static_cast<std::size_t>(std::max(config.keep_count, 0)) ||
            by_end.begin()->first.first < oldest)) {
      erase(by_end.begin());
    }
    mark_rewrite_if_mostly_dead();
  }

  // Lines of receipts no longer kept (replaced, expired, evicted) over half
  // the file: write it whole. Asked after every change to either side,
  // including an append that finished while add() was evicting (its lines
  // were in neither count then).
  void mark_rewrite_if_mostly_dead() {
    if (!path.empty() && file_lines + pending_lines > 2 * by_end.size()) rewrite = true;
  }

  void load() {
    std::string text;
    std::string error;
    bool missing = false;
    if (!read_whole_file(path, text, error, missing)) {
      if (!missing) log_warn("receipts: " + error + "; starting without the saved receipts");
      return;
    }
    file_bytes = text.size();
    std::size_t bad = 0;
    std::string first_bad;
    for (std::size_t at = 0; at < text.size();) {
      std::size_t eol = text.find('\n', at);
      const bool torn = eol == std::string::npos;
      if (torn) eol = text.size();
      const std::string line = text.substr(at, eol - at);
      at = eol + 1;
      if (line.empty()) continue;
      ++file_lines;
      JobReceipt r;
      if (torn || !receipt_from_json(line, r, error)) {
        if (bad++ == 0) first_bad = torn ? "a torn last line" : error;
        // The file is written whole again: an append must not follow a torn line.
        rewrite = true;
        continue;
      }
      insert(std::move(r));
    }
    if (bad > 0) {
      log_warn("receipts: " + std::to_string(bad) + " bad line(s) in " + path +
               " skipped (the first: " + printable(first_bad) + ")");
    }
  }

  // The writer thread: appends what add() queued; writes the file whole,
  // atomically, when asked.
  void write_loop() {
    set_thread_name("ibfx-receipts");
    std::unique_lock lock(mutex);
    while (true) {
      wake.wait(lock, [&] { return stopping || rewrite || !pending.empty(); });
      if (rewrite) {
        // The whole file from what is kept now: the pending lines are in it.
        std::string text;
        for (const auto& [key, r] : by_end) text += receipt_to_json(r) + "\n";
        const std::size_t lines = by_end.size();
        pending.clear();
        pending_lines = 0;
        rewrite = false;
        lock.unlock();
        std::string error;
        const bool ok = write_file_atomically(path, text, error);
        lock.lock();
        if (ok) {
          file_lines = lines;
          file_bytes = text.size();
        } else {
          ++write_failures;
          log_warn("receipts: " + error);
        }
      } else if (!pending.empty()) {
        std::string text = std::move(pending);
        const std::size_t lines = pending_lines;
        pending.clear();
        pending_lines = 0;
        lock.unlock();
        std::string error;
        const bool ok = append_file(path, text, error);
        lock.lock();
        if (ok) {
          file_lines += lines;
          file_bytes += text.size();
          mark_rewrite_if_mostly_dead();
        } else {
          ++write_failures;
          log_warn("receipts: " + error);
          // Whatever part of it reached the file, the next write is whole.
          rewrite = true;
        }
      }
      if (stopping && pending.empty() && !rewrite) return;
    }
  }
};

ReceiptStore::ReceiptStore(std::string directory, ReceiptsConfig config)
    : impl_(std::make_unique<Impl>()) {
  impl_->config = config;
  if (!directory.empty()) {
    directory += kFileName;
    impl_->path = std::move(directory);
  }
  if (impl_->path.empty()) return;
  impl_->load();
  impl_->last_now = unix_seconds_now();
  impl_->bound(impl_->last_now);
  impl_->writer = std::thread([this] { impl_->write_loop(); });
}

ReceiptStore::~ReceiptStore() { stop(); }

void ReceiptStore::add(std::vector<JobReceipt> receipts, double now) {
  // Serialized on the caller's thread, outside the lock: readers never
  // wait for it.
  std::string lines;
  if (!impl_->path.empty()) {
    for (const JobReceipt& r : receipts) lines += receipt_to_json(r) + "\n";
  }
  {
    const std::lock_guard lock(impl_->mutex);
    impl_->last_now = now;
    for (JobReceipt& r : receipts) impl_->insert(std::move(r));
    if (!impl_->path.empty() && !impl_->stopping) {
      impl_->pending += lines;
      impl_->pending_lines += receipts.size();
    }
    impl_->bound(now);
  }
  impl_->wake.notify_one();
}

std::optional<JobReceipt> ReceiptStore::find(std::uint64_t job_id) const {
  const std::lock_guard lock(impl_->mutex);
  const auto end = impl_->end_of.find(job_id);
  if (end == impl_->end_of.end()) return std::nullopt;
  return impl_->by_end.at({end->second, job_id});
}

std::vector<JobReceipt> ReceiptStore::list(const ReceiptQuery& query) const {
  std::vector<JobReceipt> out;
  const std::lock_guard lock(impl_->mutex);
  for (auto it = impl_->by_end.rbegin(); it != impl_->by_end.rend() && out.size() < query.limit;
       ++it) {
    if (it->first.first < query.since) break;
    if (!query.user.empty() && it->second.user != query.user) continue;
    out.push_back(it->second);
  }
  return out;
}

void ReceiptStore::reload(const ReceiptsConfig& config) {
  {
    const std::lock_guard lock(impl_->mutex);
    impl_->config = config;
    impl_->bound(impl_->last_now);
  }
  impl_->wake.notify_one();
}

ReceiptStoreStats ReceiptStore::stats() const {
  const std::lock_guard lock(impl_->mutex);
  ReceiptStoreStats s;
  s.receipts = impl_->by_end.size();
  s.memory_bytes = impl_->memory;
  s.file_bytes = impl_->file_bytes;
  s.write_failures = impl_->write_failures;
  return s;
}

void ReceiptStore::stop() {
  {
    const std::lock_guard lock(impl_->mutex);
    impl_->stopping = true;
  }
  impl_->wake.notify_one();
  if (impl_->writer.joinable()) impl_->writer.join();
}

}  // namespace ibfx
