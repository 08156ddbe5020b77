// A memo of deflated blocks across snapshots. Between two sweeps of the same
// fabric much of the exposition does not change (port info, rates, states,
// node info, LIDs, the error counters of healthy ports: ~40 % of the text at
// 98k ports, nearly all of it on a quiet fabric), yet deflating it is most of
// a render's CPU. ParallelDeflater (exposition/gzip.h) cuts its input at
// content-defined line ends, so an unchanged stretch of text comes back as
// the same blocks after the same 32 kB of dictionary; this cache hands back
// what deflating such a block produced last time, and the deflate (and its
// CRC-32) is skipped.
//
// A block's raw deflate (RFC 1951) depends only on the zlib level, the preset
// dictionary and the block's bytes, so those are the key: a 128-bit XXH3 of
// the three, seeded with a random 64-bit seed per cache. Node descriptions
// come from the fabric, so the seed keeps anyone from crafting two blocks
// with the same key; without it 128 bits of a non-cryptographic hash would
// still be far from an accidental collision.
//
// Memory: two generations. A compress looks blocks up in the one the last
// compress used and moves each hit into the current one; end_generation()
// then drops whatever the last snapshot did not use. So the cache holds at
// most one snapshot's compressed size once a compress has ended (~10 MB at
// 98k ports), two during one.
//
// Not thread-safe, on purpose: one ParallelDeflater uses it from the thread
// that writes to it (lookups when a block is submitted, insertions when a
// deflated block is handed on, both on that thread), and the publisher
// compresses one snapshot at a time. Share it between threads only under a
// lock of your own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

struct XXH3_state_s;  // libxxhash's hashing state (xxhash.h)

namespace ibfx {

// One block as raw deflate: its bytes end on a byte boundary (Z_SYNC_FLUSH),
// with no final block, and the CRC-32 and length of the text they stand for.
struct DeflatedBlock {
  std::string bytes;
  std::uint32_t crc = 0;     // CRC-32 of the block's text (RFC 1952 CRC32)
  std::uint64_t length = 0;  // bytes of text
};

class DeflateBlockCache {
 public:
  struct Key {
    std::uint64_t low = 0;
    std::uint64_t high = 0;
    friend bool operator==(const Key&, const Key&) = default;
  };

  // Seeded from std::random_device.
  DeflateBlockCache();
  // A fixed seed (tests).
  explicit DeflateBlockCache(std::uint64_t seed);
  ~DeflateBlockCache();
  DeflateBlockCache(const DeflateBlockCache&) = delete;
  DeflateBlockCache& operator=(const DeflateBlockCache&) = delete;

  // The key of `block` deflated at `level` after `dictionary`.
  Key key(int level, std::string_view dictionary, std::string_view block) const;
  // What `key` deflated to, or null. A hit stays for the next generation.
  std::shared_ptr<const DeflatedBlock> find(const Key& key);
  // Records a block deflated in the current generation.
  void insert(const Key& key, const std::shared_ptr<const DeflatedBlock>& block);
  // Ends a compress: keeps only the blocks it looked up or inserted.
  void end_generation();

  // Blocks held, and their compressed bytes (both generations).
  std::size_t blocks() const { return current_.size() + previous_.size(); }
  std::uint64_t compressed_bytes() const { return current_bytes_ + previous_bytes_; }

 private:
  struct KeyHash {
    std::size_t operator()(const Key& k) const { return static_cast<std::size_t>(k.low); }
  };
  using Map = std::unordered_map<Key, std::shared_ptr<const DeflatedBlock>, KeyHash>;

  static void free_state(XXH3_state_s* state);

  std::uint64_t seed_;
  // Reused by every key(): the one thread that uses the cache at a time.
  std::unique_ptr<XXH3_state_s, void (*)(XXH3_state_s*)> state_;
  Map current_;   // used by the compress under way
  Map previous_;  // used by the last compress that ended, not yet by this one
  std::uint64_t current_bytes_ = 0;
  std::uint64_t previous_bytes_ = 0;
};

}  // namespace ibfx
