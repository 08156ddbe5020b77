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
  std::size_t run = 0;  // index of the run it belongs to
  std::string data;     // raw deflate, ending on a byte boundary, not final
  uLong crc = 0;
  std::size_t length = 0;
};

CompressedBlock deflate_block(std::size_t run, const std::string& input,
                              const std::string& dictionary, int level) {
  z_stream zs{};
  // Negative windowBits: raw deflate, the gzip framing is written around the runs.
  if (deflateInit2(&zs, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw std::runtime_error("gzip: deflateInit2 failed");
  }
  CompressedBlock out;
  out.run = run;
  if (!dictionary.empty()) {
    deflateSetDictionary(&zs, reinterpret_cast<const Bytef*>(dictionary.data()),
                         static_cast<uInt>(dictionary.size()));
  }
  zs.next_in = reinterpret_cast<const Bytef*>(input.data());
  zs.avail_in = static_cast<uInt>(input.size());
  // The bound does not count the sync flush's empty stored block (5 bytes);
  // loop anyway while zlib fills the room (zlib.h: call again with the same
  // flush while avail_out is 0).
  std::size_t room = deflateBound(&zs, static_cast<uLong>(input.size())) + 16;
  int rc = Z_OK;
  do {
    const std::size_t used = out.data.size();
    out.data.resize(used + room);
    zs.next_out = reinterpret_cast<Bytef*>(out.data.data() + used);
    zs.avail_out = static_cast<uInt>(room);
    rc = deflate(&zs, Z_SYNC_FLUSH);
    out.data.resize(used + room - zs.avail_out);
    room = kOutStep;
  } while (rc == Z_OK && zs.avail_out == 0);
  const bool ok = rc == Z_OK && zs.avail_in == 0;
  deflateEnd(&zs);
  if (!ok) throw std::runtime_error("gzip: deflate failed");
  out.crc = crc32(0, reinterpret_cast<const Bytef*>(input.data()), static_cast<uInt>(input.size()));
  out.length = input.size();
  return out;
}

void put_le32(std::string& out, uLong v) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

// RFC 1952 2.3: magic, CM=deflate, no flags, no mtime, no extra flags,
// OS=Unix (3) as zlib writes it.
constexpr std::string_view kGzipHeader("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", 10);
// RFC 1951 3.2.3/3.2.6: BFINAL=1, BTYPE=01 (fixed Huffman), then the
// end-of-block code 256 (seven 0 bits): the empty last block that closes the
// runs' non-final ones (what zlib's Z_FINISH writes after a sync flush).
constexpr std::string_view kEmptyFinalBlock("\x03\x00", 2);
}  // namespace

struct ParallelDeflater::Pending {
  std::deque<std::future<CompressedBlock>> blocks;  // in stream order
};

ParallelDeflater::ParallelDeflater(int level, unsigned threads, std::size_t block_bytes)
    : level_(level),
      threads_(std::max(1u, threads)),
      // Blocks fit zlib's 32-bit counters and are longer than the window.
      block_bytes_(std::clamp<std::size_t>(block_bytes, 2 * kWindow, kSlice)),
      pending_(std::make_unique<Pending>()),
      runs_(1) {
  block_.reserve(block_bytes_);
}

ParallelDeflater::~ParallelDeflater() {
  // Never leave a compression running on freed input: the futures own
  // copies, but wait for them so no thread outlives the writer.
  for (auto& f : pending_->blocks) {
    if (f.valid()) f.wait();
  }
}

void ParallelDeflater::write(std::string_view data) {
  bytes_in_ += data.size();
  while (!data.empty()) {
    const std::size_t n = std::min(data.size(), block_bytes_ - block_.size());
    block_.append(data.substr(0, n));
    data.remove_prefix(n);
    if (block_.size() == block_bytes_) submit();
  }
}

void ParallelDeflater::submit() {
  if (block_.empty()) return;
  if (pending_->blocks.size() >= threads_) drain_one();
  std::string next_dictionary = block_.substr(block_.size() - std::min(block_.size(), kWindow));
  pending_->blocks.push_back(std::async(
      std::launch::async,
      [run = runs_.size() - 1, input = std::move(block_), dictionary = std::move(dictionary_),
       level = level_] { return deflate_block(run, input, dictionary, level); }));
  dictionary_ = std::move(next_dictionary);
  block_ = std::string();
  block_.reserve(block_bytes_);
}

void ParallelDeflater::end_run() {
  submit();
  // The next run must inflate on its own: nothing of this one as its dictionary.
  dictionary_.clear();
  runs_.emplace_back();
}

void ParallelDeflater::drain_one() {
  CompressedBlock b = pending_->blocks.front().get();
  pending_->blocks.pop_front();
  DeflateRun& run = runs_[b.run];
  run.bytes += b.data;
  run.crc =
      static_cast<std::uint32_t>(crc32_combine(run.crc, b.crc, static_cast<z_off_t>(b.length)));
  run.length += b.length;
}

std::vector<DeflateRun> ParallelDeflater::finish() {
  submit();
  while (!pending_->blocks.empty()) drain_one();
  for (DeflateRun& run : runs_) run.bytes.shrink_to_fit();
  return std::move(runs_);
}

GzipMember::GzipMember(std::vector<const DeflateRun*> runs)
    : runs_(std::move(runs)), header_(kGzipHeader) {
  uLong crc = 0;
  size_ = header_.size();
  for (const DeflateRun* r : runs_) {
    crc = crc32_combine(crc, r->crc, static_cast<z_off_t>(r->length));
    text_size_ += r->length;
    size_ += r->bytes.size();
  }
  crc_ = static_cast<std::uint32_t>(crc);
  trailer_.assign(kEmptyFinalBlock);
  put_le32(trailer_, crc);
  // ISIZE: the input length modulo 2^32.
  put_le32(trailer_, static_cast<uLong>(text_size_ & 0xffffffffu));
  size_ += trailer_.size();
}

bool GzipMember::read(std::string& piece, std::size_t max_bytes) {
  piece.clear();
  while (part_ < runs_.size() + 2 && piece.size() < max_bytes) {
    const std::string_view part = part_ == 0 ? std::string_view(header_)
                                  : part_ <= runs_.size()
                                      ? std::string_view(runs_[part_ - 1]->bytes)
                                      : std::string_view(trailer_);
    const std::size_t n = std::min(max_bytes - piece.size(), part.size() - offset_);
    piece.append(part.substr(offset_, n));
    offset_ += n;
    if (offset_ == part.size()) {
      ++part_;
      offset_ = 0;
    }
  }
  return part_ < runs_.size() + 2;
}

std::string gzip_member(const std::vector<const DeflateRun*>& runs) {
  GzipMember member(runs);
  std::string out;
  out.reserve(member.size());
  std::string piece;
  bool more = true;
  while (more) {
    more = member.read(piece, kOutStep);
    out += piece;
  }
  return out;
}

struct DeflateRunReader::State {
  z_stream zs{};
  std::vector<const DeflateRun*> runs;
  std::size_t next_run = 0;  // the first run not yet fed to zs
  std::uint64_t left = 0;    // text bytes still to come
};

DeflateRunReader::DeflateRunReader(std::vector<const DeflateRun*> runs)
    : state_(std::make_unique<State>()) {
  // One raw inflate stream over the runs one after the other: each ends on a
  // block boundary, and the next one's blocks never refer back into it.
  if (inflateInit2(&state_->zs, -15) != Z_OK) {
    throw std::runtime_error("inflate: inflateInit2 failed");
  }
  for (const DeflateRun* r : runs) state_->left += r->length;
  state_->runs = std::move(runs);
}

DeflateRunReader::~DeflateRunReader() { inflateEnd(&state_->zs); }

bool DeflateRunReader::read(std::string& out, std::size_t max_bytes) {
  State& st = *state_;
  z_stream& zs = st.zs;
  const std::size_t want =
      static_cast<std::size_t>(std::min<std::uint64_t>(st.left, std::min(max_bytes, kSlice)));
  out.resize(want);
  std::size_t got = 0;
  while (got < want) {
    if (zs.avail_in == 0) {
      // Skip empty runs; a run's bytes are far below 4 GiB (one group).
      while (st.next_run < st.runs.size() && st.runs[st.next_run]->bytes.empty()) ++st.next_run;
      if (st.next_run == st.runs.size()) throw std::runtime_error("inflate: runs end early");
      const std::string& bytes = st.runs[st.next_run++]->bytes;
      if (bytes.size() > std::numeric_limits<uInt>::max()) {
        throw std::runtime_error("inflate: run too large");
      }
      zs.next_in = reinterpret_cast<const Bytef*>(bytes.data());
      zs.avail_in = static_cast<uInt>(bytes.size());
    }
    zs.next_out = reinterpret_cast<Bytef*>(out.data() + got);
    zs.avail_out = static_cast<uInt>(want - got);
    const uInt room = zs.avail_out;
    const int rc = inflate(&zs, Z_NO_FLUSH);
    got += room - zs.avail_out;
    // A run has no final block: Z_STREAM_END means corrupt input here.
    if (rc != Z_OK && rc != Z_BUF_ERROR) throw std::runtime_error("inflate: corrupt run");
  }
  st.left -= got;
  return st.left > 0;
}

std::string ParallelGzipWriter::finish() {
  const std::vector<DeflateRun> runs = deflater_.finish();
  return gzip_member({&runs.front()});
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
