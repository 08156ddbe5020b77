// Test-only gzip helpers: inflating what the daemon serves, and whole
// members assembled from deflate runs. Production never holds a whole
// exposition in one string (exposition/gzip.h streams it), so these live
// here, under test/, not in a production folder.
#pragma once

// zlib's next_in is only const-correct with ZLIB_CONST.
#ifndef ZLIB_CONST
#define ZLIB_CONST
#endif
#include <zlib.h>

#include <algorithm>
#include <cstddef>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "exposition/gzip.h"

namespace ibfx::test {

// Streaming decompressor over a gzip string that outlives it (one member or
// several). Throws std::runtime_error on corrupt or truncated input.
class GunzipReader {
 public:
  explicit GunzipReader(std::string_view gzip) {
    // windowBits 15 + 16: a gzip header and trailer instead of zlib's.
    if (inflateInit2(&zs_, 15 + 16) != Z_OK)
      throw std::runtime_error("gunzip: inflateInit2 failed");
    if (gzip.size() > std::numeric_limits<uInt>::max()) {
      inflateEnd(&zs_);
      throw std::runtime_error("gunzip: input too large");
    }
    zs_.next_in = reinterpret_cast<const Bytef*>(gzip.data());
    zs_.avail_in = static_cast<uInt>(gzip.size());
  }
  ~GunzipReader() { inflateEnd(&zs_); }
  GunzipReader(const GunzipReader&) = delete;
  GunzipReader& operator=(const GunzipReader&) = delete;

  // Replaces `out` with up to `max_bytes` of the next bytes; false once the
  // stream has ended (then `out` holds the last bytes, possibly none).
  bool read(std::string& out, std::size_t max_bytes) {
    out.resize(max_bytes);
    if (ended_ || max_bytes == 0) {
      out.clear();
      return !ended_;
    }
    zs_.next_out = reinterpret_cast<Bytef*>(out.data());
    zs_.avail_out = static_cast<uInt>(std::min<std::size_t>(max_bytes, std::size_t{1} << 30));
    const uInt room = zs_.avail_out;
    const int rc = inflate(&zs_, Z_NO_FLUSH);
    out.resize(room - zs_.avail_out);
    if (rc == Z_STREAM_END) {
      ended_ = true;
      return false;
    }
    if (rc == Z_BUF_ERROR && zs_.avail_in == 0) throw std::runtime_error("gunzip: truncated input");
    if (rc != Z_OK && rc != Z_BUF_ERROR) throw std::runtime_error("gunzip: corrupt input");
    return true;
  }

 private:
  z_stream zs_{};
  bool ended_ = false;
};

// Everything a piece-wise reader (GunzipReader, GzipMember: read(piece,
// max) returns whether more follows) produces, in one string.
template <typename Reader>
std::string read_all(Reader& reader, std::size_t reserve = 0) {
  std::string out;
  out.reserve(reserve);
  std::string piece;
  for (bool more = true; more;) {
    more = reader.read(piece, std::size_t{256} << 10);
    out += piece;
  }
  return out;
}

// The whole text of one gzip member.
inline std::string gunzip(std::string_view gzip) {
  GunzipReader r(gzip);
  return read_all(r);
}

// Runs as one gzip member, in one string (what a gzip scrape of them sends).
inline std::string gzip_member(const std::vector<const DeflateRun*>& runs) {
  GzipMember member(runs);
  return read_all(member, member.size());
}

// One run compressed into a single gzip member, the same as GzipMember over
// ParallelDeflater's one run.
class ParallelGzipWriter {
 public:
  ParallelGzipWriter(int level, unsigned threads, std::size_t block_bytes = kDeflateBlockBytes)
      : deflater_(level, threads, block_bytes) {}
  void write(std::string_view data) { deflater_.write(data); }
  std::string finish() {
    const std::vector<DeflateRun> runs = deflater_.finish();
    return gzip_member({&runs.front()});
  }
  std::size_t bytes_in() const { return deflater_.bytes_in(); }

 private:
  ParallelDeflater deflater_;
};

}  // namespace ibfx::test
