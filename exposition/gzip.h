// The exposition's compressed form, through zlib. The exposition of a big
// fabric is a hundred megabytes or more of text that compresses ~13x, so the
// daemon keeps only its compressed form: each scrape group rendered straight
// into a ParallelDeflater as one raw deflate run, any selection of runs
// served as one gzip member (GzipMember), and inflated piece by piece
// (DeflateRunReader) for the rare client that does not accept gzip. Memory
// then scales with the compressed size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ibfx {

// zlib level 1 is ~3x faster than the default (6) on exposition text and
// only ~15 % bigger, which is the right trade for a body rebuilt every sweep.
inline constexpr int kGzipFast = 1;

// A stretch of text as raw deflate (RFC 1951) that a gzip member can carry
// next to other runs as it is: its blocks end on a byte boundary
// (Z_SYNC_FLUSH), none is final, and none refers back before the run's
// start (no dictionary across runs). So any selection of runs, in order, is
// one gzip member: header + their bytes + an empty final block + the
// combined CRC-32 and the total length (GzipMember). Each scrape group of
// the exposition is one run, compressed once per snapshot.
struct DeflateRun {
  std::string bytes;
  std::uint32_t crc = 0;     // CRC-32 of the text (RFC 1952 CRC32)
  std::uint64_t length = 0;  // bytes of text
};

// Where ParallelDeflater cuts blocks by default: at least this much text,
// then the first line end the content picks (on average a quarter of this
// later), at the latest eight times this. See ParallelDeflater.
inline constexpr std::size_t kDeflateBlockBytes = std::size_t{256} << 10;

class DeflateBlockCache;

// Compresses a stream cut into runs on several threads, the way pigz does
// it: the input is cut into blocks, each block is deflated on its own with
// the 32 kB before it in the same run as preset dictionary (so the ratio
// barely changes) and ends on a byte boundary; a run's blocks are joined in
// order and its CRC combined from theirs. With `threads` compressions in
// flight next to the caller, which keeps rendering, a 2-core machine
// compresses ~2x faster than GzipWriter; a run boundary does not stall it.
//
// Blocks are cut where the content says, not every so many bytes, so that
// one value changing length (999 -> 1000) does not move every later cut:
// once a block holds `block_bytes`, it ends at the first line end ('\n')
// whose line hashes below a threshold proportional to the line's length
// (one cut per `block_bytes` / 4 bytes of lines on average, whatever their
// length), and at `block_bytes` * 8 in any case (a huge line, or no line
// picked). A cut thus depends only on the line before it and on where the
// block began, and two texts that differ in one place cut at the same lines
// again soon after it. A run boundary (end_run) always cuts. Where the
// blocks fall changes only the compressed bytes, never the text they
// inflate to, its CRC or its length.
//
// With a `cache` (exposition/deflate_block_cache.h, used from the writing thread
// only), a block whose level, dictionary and bytes were deflated by an
// earlier compress is taken from it, without deflating or CRC-ing it again,
// and every block deflated is added to it; the caller ends the cache's
// generation when its compress is done. The output is the same byte for
// byte with or without it.
class ParallelDeflater {
 public:
  ParallelDeflater(int level, unsigned threads, std::size_t block_bytes = kDeflateBlockBytes,
                   DeflateBlockCache* cache = nullptr);
  ~ParallelDeflater();
  ParallelDeflater(const ParallelDeflater&) = delete;
  ParallelDeflater& operator=(const ParallelDeflater&) = delete;

  void write(std::string_view data);
  // Ends the current run; what is written next starts a new one.
  void end_run();
  // Ends the last run and returns every run, in order (end_run() count + 1;
  // a run nothing was written to is empty: no bytes, length 0).
  std::vector<DeflateRun> finish();
  std::size_t bytes_in() const { return bytes_in_; }

  // Blocks (and their text bytes) taken from the cache, and deflated here,
  // so far. Every block counts once, when it is submitted.
  std::size_t blocks_reused() const { return blocks_reused_; }
  std::size_t blocks_deflated() const { return blocks_deflated_; }
  std::uint64_t reused_bytes() const { return reused_bytes_; }
  std::uint64_t deflated_bytes() const { return deflated_bytes_; }

 private:
  struct Pending;
  void submit();
  void drain_one();
  bool cut_after(std::string_view line) const;

  int level_;
  unsigned threads_;
  std::size_t min_bytes_;  // a block holds at least this before a content cut
  std::size_t max_bytes_;  // and never more than this
  std::size_t cut_gap_;    // bytes of lines per content cut, on average
  DeflateBlockCache* cache_;
  std::string block_;
  // Where the current line starts in block_, once block_ holds min_bytes_
  // (npos before: the lines before the minimum are never looked at).
  std::size_t line_start_;
  std::string dictionary_;  // the last 32 kB of the previous block of this run
  std::unique_ptr<Pending> pending_;
  std::vector<DeflateRun> runs_;
  std::size_t bytes_in_ = 0;
  std::size_t blocks_reused_ = 0;
  std::size_t blocks_deflated_ = 0;
  std::uint64_t reused_bytes_ = 0;
  std::uint64_t deflated_bytes_ = 0;
};

// One gzip member (RFC 1952) made of runs, streamed without copying them
// into one buffer: the 10-byte header, each run's bytes in order, an empty
// final fixed-Huffman block, then CRC32 (crc32_combine of the runs') and
// ISIZE (total length modulo 2^32). The runs must outlive the member.
class GzipMember {
 public:
  explicit GzipMember(std::vector<const DeflateRun*> runs);
  // Bytes of the whole member (a Content-Length).
  std::uint64_t size() const { return size_; }
  std::uint64_t text_size() const { return text_size_; }
  std::uint32_t crc() const { return crc_; }
  // Replaces `piece` with up to `max_bytes` of the member's next bytes;
  // false once the last byte has been handed out.
  bool read(std::string& piece, std::size_t max_bytes);

 private:
  std::vector<const DeflateRun*> runs_;
  std::string header_;
  std::string trailer_;
  std::uint64_t size_ = 0;
  std::uint64_t text_size_ = 0;
  std::uint32_t crc_ = 0;
  std::size_t part_ = 0;    // 0: header, 1..runs: a run, runs + 1: trailer
  std::size_t offset_ = 0;  // within the current part
};

// The text of runs, in order, inflated piece by piece (for clients that do
// not accept gzip, and `?node=` slices). Throws std::runtime_error on
// corrupt runs.
class DeflateRunReader {
 public:
  explicit DeflateRunReader(std::vector<const DeflateRun*> runs);
  ~DeflateRunReader();
  DeflateRunReader(const DeflateRunReader&) = delete;
  DeflateRunReader& operator=(const DeflateRunReader&) = delete;

  // Replaces `out` with up to `max_bytes` of the next text; false once the
  // text has ended (then `out` holds the last bytes, possibly none).
  bool read(std::string& out, std::size_t max_bytes);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace ibfx
