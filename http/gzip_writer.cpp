#include "http/gzip_writer.h"

// zlib's next_in is only const-correct with ZLIB_CONST.
#define ZLIB_CONST
#include <zlib.h>

#include <algorithm>
#include <stdexcept>

namespace ibfx {
namespace {
// windowBits 15 + 16: a gzip header and trailer instead of zlib's.
constexpr int kGzipWindowBits = 15 + 16;
// avail_in/avail_out are 32-bit: feed big buffers in slices.
constexpr std::size_t kSlice = std::size_t{1} << 30;
constexpr std::size_t kOutStep = std::size_t{256} << 10;
}  // namespace

struct GzipWriter::State {
  z_stream zs{};
};

GzipWriter::GzipWriter(int level) : state_(std::make_unique<State>()) {
  if (deflateInit2(&state_->zs, level, Z_DEFLATED, kGzipWindowBits, 8, Z_DEFAULT_STRATEGY) !=
      Z_OK) {
    throw std::runtime_error("gzip: deflateInit2 failed");
  }
}

GzipWriter::~GzipWriter() { deflateEnd(&state_->zs); }

void GzipWriter::deflate_into(std::string_view data, int flush) {
  z_stream& zs = state_->zs;
  do {
    const std::size_t slice = std::min(data.size(), kSlice);
    zs.next_in = reinterpret_cast<const Bytef*>(data.data());
    zs.avail_in = static_cast<uInt>(slice);
    const bool last_slice = slice == data.size();
    const int mode = last_slice ? flush : Z_NO_FLUSH;
    int rc = Z_OK;
    do {
      // Grow by at least the deflate bound of what is left, so one call
      // usually suffices.
      const std::size_t used = out_.size();
      const std::size_t room = std::max<std::size_t>(kOutStep, deflateBound(&zs, zs.avail_in) / 2);
      out_.resize(used + room);
      zs.next_out = reinterpret_cast<Bytef*>(out_.data() + used);
      zs.avail_out = static_cast<uInt>(room);
      rc = deflate(&zs, mode);
      out_.resize(used + room - zs.avail_out);
      if (rc == Z_STREAM_ERROR) throw std::runtime_error("gzip: deflate failed");
    } while (zs.avail_out == 0 || (mode == Z_FINISH && rc != Z_STREAM_END));
    data.remove_prefix(slice);
  } while (!data.empty());
}

void GzipWriter::write(std::string_view data) {
  bytes_in_ += data.size();
  if (!data.empty()) deflate_into(data, Z_NO_FLUSH);
}

std::string GzipWriter::finish() {
  deflate_into({}, Z_FINISH);
  out_.shrink_to_fit();
  return std::move(out_);
}

std::string gzip_compress(std::string_view data, int level) {
  GzipWriter w(level);
  w.write(data);
  return w.finish();
}

}  // namespace ibfx
