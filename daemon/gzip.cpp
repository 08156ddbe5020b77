#include "daemon/gzip.h"

// zlib's next_in is only const-correct with ZLIB_CONST.
#define ZLIB_CONST
#include <zlib.h>

#include <algorithm>
#include <deque>
#include <future>
#include <limits>
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

namespace {
constexpr std::size_t kWindow = 32768;  // deflate's history: the preset dictionary size

struct CompressedBlock {
  std::string data;  // raw deflate, ending on a byte boundary
  uLong crc = 0;
  std::size_t length = 0;
};

CompressedBlock deflate_block(const std::string& input, const std::string& dictionary, int level,
                              bool last) {
  z_stream zs{};
  // Negative windowBits: raw deflate, the gzip framing is written once around all blocks.
  if (deflateInit2(&zs, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw std::runtime_error("gzip: deflateInit2 failed");
  }
  CompressedBlock out;
  if (!dictionary.empty()) {
    deflateSetDictionary(&zs, reinterpret_cast<const Bytef*>(dictionary.data()),
                         static_cast<uInt>(dictionary.size()));
  }
  out.data.resize(deflateBound(&zs, static_cast<uLong>(input.size())) + 16);
  zs.next_in = reinterpret_cast<const Bytef*>(input.data());
  zs.avail_in = static_cast<uInt>(input.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data.data());
  zs.avail_out = static_cast<uInt>(out.data.size());
  const int rc = deflate(&zs, last ? Z_FINISH : Z_SYNC_FLUSH);
  const bool ok = last ? rc == Z_STREAM_END : (rc == Z_OK && zs.avail_in == 0);
  out.data.resize(out.data.size() - zs.avail_out);
  deflateEnd(&zs);
  if (!ok) throw std::runtime_error("gzip: deflate failed");
  out.crc = crc32(0, reinterpret_cast<const Bytef*>(input.data()), static_cast<uInt>(input.size()));
  out.length = input.size();
  return out;
}

void put_le32(std::string& out, uLong v) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}
}  // namespace

struct ParallelGzipWriter::Pending {
  std::deque<std::future<CompressedBlock>> blocks;  // in stream order
};

ParallelGzipWriter::ParallelGzipWriter(int level, unsigned threads, std::size_t block_bytes)
    : level_(level),
      threads_(std::max(1u, threads)),
      // Blocks fit zlib's 32-bit counters and are longer than the window.
      block_bytes_(std::clamp<std::size_t>(block_bytes, 2 * kWindow, kSlice)),
      pending_(std::make_unique<Pending>()) {
  // Header (RFC 1952 2.3): magic, CM=deflate, no flags, no mtime, no extra
  // flags, OS=Unix (3) as zlib writes it.
  out_.assign("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", 10);
  block_.reserve(block_bytes_);
}

ParallelGzipWriter::~ParallelGzipWriter() {
  // Never leave a compression running on freed input: the futures own
  // copies, but wait for them so no thread outlives the writer.
  for (auto& f : pending_->blocks) {
    if (f.valid()) f.wait();
  }
}

void ParallelGzipWriter::write(std::string_view data) {
  bytes_in_ += data.size();
  while (!data.empty()) {
    const std::size_t n = std::min(data.size(), block_bytes_ - block_.size());
    block_.append(data.substr(0, n));
    data.remove_prefix(n);
    if (block_.size() == block_bytes_) submit(false);
  }
}

void ParallelGzipWriter::submit(bool last) {
  if (pending_->blocks.size() >= threads_) drain_one();
  // Every block but the last is at least two windows long.
  std::string next_dictionary = block_.substr(block_.size() - std::min(block_.size(), kWindow));
  pending_->blocks.push_back(
      std::async(std::launch::async,
                 [input = std::move(block_), dictionary = std::move(dictionary_), level = level_,
                  last] { return deflate_block(input, dictionary, level, last); }));
  dictionary_ = std::move(next_dictionary);
  block_ = std::string();
  block_.reserve(block_bytes_);
}

void ParallelGzipWriter::drain_one() {
  CompressedBlock b = pending_->blocks.front().get();
  pending_->blocks.pop_front();
  out_ += b.data;
  crc_ = crc32_combine(crc_, b.crc, static_cast<z_off_t>(b.length));
}

std::string ParallelGzipWriter::finish() {
  submit(true);
  while (!pending_->blocks.empty()) drain_one();
  // Trailer: CRC-32 and the input length modulo 2^32, little-endian.
  put_le32(out_, crc_);
  put_le32(out_, static_cast<uLong>(bytes_in_ & 0xffffffffu));
  out_.shrink_to_fit();
  return std::move(out_);
}

struct GunzipReader::State {
  z_stream zs{};
};

GunzipReader::GunzipReader(std::string_view gzip) : state_(std::make_unique<State>()) {
  if (inflateInit2(&state_->zs, kGzipWindowBits) != Z_OK) {
    throw std::runtime_error("gunzip: inflateInit2 failed");
  }
  state_->zs.next_in = reinterpret_cast<const Bytef*>(gzip.data());
  // The exposition's gzip is far below 4 GiB; refuse rather than truncate.
  if (gzip.size() > std::numeric_limits<uInt>::max()) {
    inflateEnd(&state_->zs);
    throw std::runtime_error("gunzip: input too large");
  }
  state_->zs.avail_in = static_cast<uInt>(gzip.size());
}

GunzipReader::~GunzipReader() { inflateEnd(&state_->zs); }

bool GunzipReader::read(std::string& out, std::size_t max_bytes) {
  out.resize(max_bytes);
  if (ended_ || max_bytes == 0) {
    out.clear();
    return !ended_;
  }
  z_stream& zs = state_->zs;
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(std::min(max_bytes, kSlice));
  const uInt room = zs.avail_out;
  const int rc = inflate(&zs, Z_NO_FLUSH);
  out.resize(room - zs.avail_out);
  if (rc == Z_STREAM_END) {
    ended_ = true;
    return false;
  }
  if (rc == Z_BUF_ERROR && zs.avail_in == 0) throw std::runtime_error("gunzip: truncated input");
  if (rc != Z_OK && rc != Z_BUF_ERROR) throw std::runtime_error("gunzip: corrupt input");
  return true;
}

std::string gzip_compress(std::string_view data, int level) {
  GzipWriter w(level);
  w.write(data);
  return w.finish();
}

std::string gunzip(std::string_view gzip) {
  GunzipReader r(gzip);
  std::string out;
  std::string piece;
  bool more = true;
  while (more) {
    more = r.read(piece, kOutStep);
    out += piece;
  }
  return out;
}

}  // namespace ibfx
