#include "exposition/gzip.h"

#include <xxhash.h>
// zlib's next_in is only const-correct with ZLIB_CONST.
#define ZLIB_CONST
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <future>
#include <limits>
#include <stdexcept>

#include "exposition/deflate_block_cache.h"

namespace ibfx {
namespace {
// avail_in/avail_out are 32-bit: feed big buffers in slices.
constexpr std::size_t kSlice = std::size_t{1} << 30;
constexpr std::size_t kOutStep = std::size_t{256} << 10;
}  // namespace

namespace {
constexpr std::size_t kWindow = 32768;  // deflate's history: the preset dictionary size

std::shared_ptr<DeflatedBlock> deflate_block(const std::string& input,
                                             const std::string& dictionary, int level) {
  z_stream zs{};
  // Negative windowBits: raw deflate, the gzip framing is written around the runs.
  if (deflateInit2(&zs, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw std::runtime_error("gzip: deflateInit2 failed");
  }
  auto out = std::make_shared<DeflatedBlock>();
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
    const std::size_t used = out->bytes.size();
    out->bytes.resize(used + room);
    zs.next_out = reinterpret_cast<Bytef*>(out->bytes.data() + used);
    zs.avail_out = static_cast<uInt>(room);
    rc = deflate(&zs, Z_SYNC_FLUSH);
    out->bytes.resize(used + room - zs.avail_out);
    room = kOutStep;
  } while (rc == Z_OK && zs.avail_out == 0);
  const bool ok = rc == Z_OK && zs.avail_in == 0;
  deflateEnd(&zs);
  if (!ok) throw std::runtime_error("gzip: deflate failed");
  // The room was the deflate bound, about the input's size: a cached block
  // must not hold 13 times its bytes.
  out->bytes.shrink_to_fit();
  out->crc = static_cast<std::uint32_t>(
      crc32(0, reinterpret_cast<const Bytef*>(input.data()), static_cast<uInt>(input.size())));
  out->length = input.size();
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
  struct Block {
    std::size_t run = 0;  // index of the run it belongs to
    // Being deflated on its own thread, or (a cache hit) already there.
    std::future<std::shared_ptr<DeflatedBlock>> deflating;
    std::shared_ptr<const DeflatedBlock> done;
    DeflateBlockCache::Key key;
  };
  std::deque<Block> blocks;  // in stream order
  unsigned in_flight = 0;    // of them, being deflated
};

ParallelDeflater::ParallelDeflater(int level, unsigned threads, std::size_t block_bytes,
                                   DeflateBlockCache* cache)
    : level_(level),
      threads_(std::max(1u, threads)),
      // Blocks are longer than the window and fit zlib's 32-bit counters.
      min_bytes_(std::clamp<std::size_t>(block_bytes, 2 * kWindow, kSlice / 8)),
      max_bytes_(8 * min_bytes_),
      cut_gap_(min_bytes_ / 4),
      cache_(cache),
      line_start_(std::string::npos),
      pending_(std::make_unique<Pending>()),
      runs_(1) {
  block_.reserve(min_bytes_ + 2 * cut_gap_);
}

ParallelDeflater::~ParallelDeflater() {
  // Never leave a compression running on freed input: the futures own
  // copies, but wait for them so no thread outlives the writer.
  for (auto& b : pending_->blocks) {
    if (b.deflating.valid()) b.deflating.wait();
  }
}

bool ParallelDeflater::cut_after(std::string_view line) const {
  // A line of n bytes ends a block with probability n / cut_gap_: the top
  // 32 bits of its hash, read as a fraction of 2^32, below n / cut_gap_.
  // So cuts come every cut_gap_ bytes on average whether the lines are short
  // or long, and only this line's bytes decide. An unseeded hash: the same
  // text cuts the same way in every process (a crafted line can at worst
  // make no cut, and the maximum still cuts).
  const std::uint64_t h = XXH3_64bits(line.data(), line.size());
  return (h >> 32) * cut_gap_ < (static_cast<std::uint64_t>(line.size()) << 32);
}

void ParallelDeflater::write(std::string_view data) {
  bytes_in_ += data.size();
  while (!data.empty()) {
    if (block_.size() < min_bytes_) {
      const std::size_t n = std::min(data.size(), min_bytes_ - block_.size());
      block_.append(data.substr(0, n));
      data.remove_prefix(n);
      continue;
    }
    if (line_start_ == std::string::npos) {
      // The line under way at the minimum (a block after a content cut
      // starts at a line start; one after a forced cut, mid-line).
      const std::size_t nl = block_.rfind('\n');
      line_start_ = nl == std::string::npos ? 0 : nl + 1;
    }
    // The next line end, if it comes before the maximum.
    const std::string_view window = data.substr(0, max_bytes_ - block_.size());
    const void* nl = std::memchr(window.data(), '\n', window.size());
    const std::size_t n =
        nl == nullptr ? window.size() : static_cast<const char*>(nl) - window.data() + 1;
    block_.append(window.substr(0, n));
    data.remove_prefix(n);
    const bool picked = nl != nullptr && cut_after(std::string_view(block_).substr(line_start_));
    if (picked || block_.size() == max_bytes_) {
      submit();
    } else if (nl != nullptr) {
      line_start_ = block_.size();
    }
  }
}

void ParallelDeflater::submit() {
  line_start_ = std::string::npos;
  if (block_.empty()) return;
  std::string next_dictionary = block_.substr(block_.size() - std::min(block_.size(), kWindow));
  Pending::Block b;
  b.run = runs_.size() - 1;
  if (cache_ != nullptr) {
    b.key = cache_->key(level_, dictionary_, block_);
    b.done = cache_->find(b.key);
  }
  if (b.done) {
    ++blocks_reused_;
    reused_bytes_ += block_.size();
    block_.clear();  // keeps its capacity for the next block
  } else {
    ++blocks_deflated_;
    deflated_bytes_ += block_.size();
    while (pending_->in_flight >= threads_) drain_one();
    b.deflating = std::async(std::launch::async,
                             [input = std::move(block_), dictionary = std::move(dictionary_),
                              level = level_] { return deflate_block(input, dictionary, level); });
    ++pending_->in_flight;
    block_ = std::string();
    block_.reserve(min_bytes_ + 2 * cut_gap_);
  }
  pending_->blocks.push_back(std::move(b));
  // Cache hits at the front cost nothing to hand on: keep the queue short.
  while (!pending_->blocks.empty() && pending_->blocks.front().done) drain_one();
  dictionary_ = std::move(next_dictionary);
}

void ParallelDeflater::end_run() {
  submit();
  // The next run must inflate on its own: nothing of this one as its dictionary.
  dictionary_.clear();
  runs_.emplace_back();
}

void ParallelDeflater::drain_one() {
  Pending::Block b = std::move(pending_->blocks.front());
  pending_->blocks.pop_front();
  if (!b.done) {
    --pending_->in_flight;
    std::shared_ptr<DeflatedBlock> made = b.deflating.get();
    if (cache_ != nullptr) cache_->insert(b.key, made);
    b.done = std::move(made);
  }
  const DeflatedBlock& d = *b.done;
  DeflateRun& run = runs_[b.run];
  run.bytes += d.bytes;
  run.crc =
      static_cast<std::uint32_t>(crc32_combine(run.crc, d.crc, static_cast<z_off_t>(d.length)));
  run.length += d.length;
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

}  // namespace ibfx
