// gzip (RFC 1952) through zlib, whole or streamed. The exposition of a big
// fabric is hundreds of megabytes of text that compresses ~30x, so the
// daemon keeps only its gzip form: rendered straight into a GzipWriter, and
// inflated piece by piece (GunzipReader) for the rare client that does not
// accept gzip. Memory then scales with the compressed size.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace ibfx {

// zlib levels: 1 is ~3x faster than the default (6) on exposition text and
// only ~15 % bigger, which is the right trade for a body rebuilt every sweep.
inline constexpr int kGzipFast = 1;
inline constexpr int kGzipDefault = -1;  // Z_DEFAULT_COMPRESSION

// Streaming compressor. Throws std::runtime_error only when zlib itself fails
// (out of memory), never on input.
class GzipWriter {
 public:
  explicit GzipWriter(int level = kGzipDefault);
  ~GzipWriter();
  GzipWriter(const GzipWriter&) = delete;
  GzipWriter& operator=(const GzipWriter&) = delete;

  void write(std::string_view data);
  // Ends the stream and returns the compressed bytes; the writer is spent.
  std::string finish();
  std::size_t bytes_in() const { return bytes_in_; }

 private:
  void deflate_into(std::string_view data, int flush);
  struct State;
  std::unique_ptr<State> state_;
  std::string out_;
  std::size_t bytes_in_ = 0;
};

// The same stream compressed on several threads, the way pigz does it: the
// input is cut into blocks, each block is deflated on its own with the 32 kB
// before it as preset dictionary (so the ratio barely changes) and ends on a
// byte boundary (Z_SYNC_FLUSH); the blocks are joined in order into ONE gzip
// member whose CRC is combined from theirs. Any gzip reader reads it. With
// `threads` compressions in flight next to the caller, which keeps
// rendering, a 2-core machine compresses ~2x faster than GzipWriter.
class ParallelGzipWriter {
 public:
  ParallelGzipWriter(int level, unsigned threads, std::size_t block_bytes = std::size_t{1} << 20);
  ~ParallelGzipWriter();
  ParallelGzipWriter(const ParallelGzipWriter&) = delete;
  ParallelGzipWriter& operator=(const ParallelGzipWriter&) = delete;

  void write(std::string_view data);
  std::string finish();
  std::size_t bytes_in() const { return bytes_in_; }

 private:
  struct Pending;
  void submit(bool last);
  void drain_one();

  int level_;
  unsigned threads_;
  std::size_t block_bytes_;
  std::string block_;
  std::string dictionary_;  // the last 32 kB of the previous block
  std::unique_ptr<Pending> pending_;
  std::string out_;
  unsigned long crc_ = 0;
  std::size_t bytes_in_ = 0;
};

// Streaming decompressor over a gzip string that outlives it.
class GunzipReader {
 public:
  explicit GunzipReader(std::string_view gzip);
  ~GunzipReader();
  GunzipReader(const GunzipReader&) = delete;
  GunzipReader& operator=(const GunzipReader&) = delete;

  // Replaces `out` with up to `max_bytes` of the next decompressed bytes.
  // Returns false once the stream has ended (then `out` holds the last bytes,
  // possibly none). Throws std::runtime_error on corrupt or truncated input.
  bool read(std::string& out, std::size_t max_bytes);

 private:
  struct State;
  std::unique_ptr<State> state_;
  bool ended_ = false;
};

// Whole-buffer helpers.
std::string gzip_compress(std::string_view data, int level = kGzipDefault);
std::string gunzip(std::string_view gzip);  // throws std::runtime_error on bad input

}  // namespace ibfx
