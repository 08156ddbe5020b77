// gzip (RFC 1952) through zlib, streamed: what the HTTP server uses to
// compress a small response body when the client accepts gzip. (The
// exposition of a big fabric is compressed once per snapshot instead, as
// deflate runs: exposition/gzip.h.)
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace ibfx {

inline constexpr int kGzipDefault = -1;  // zlib's Z_DEFAULT_COMPRESSION

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

// The whole of `data` as one gzip member.
std::string gzip_compress(std::string_view data, int level = kGzipDefault);

}  // namespace ibfx
