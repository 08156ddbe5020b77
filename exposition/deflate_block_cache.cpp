#include "exposition/deflate_block_cache.h"

#include <xxhash.h>

#include <array>
#include <new>
#include <random>

namespace ibfx {
namespace {
std::uint64_t random_seed() {
  std::random_device rd;
  return (std::uint64_t{rd()} << 32) ^ std::uint64_t{rd()};
}

void update_u64(XXH3_state_t* state, std::uint64_t v) {
  // Little-endian, so a key does not depend on the host's byte order.
  std::array<unsigned char, 8> bytes{};
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = static_cast<unsigned char>(v >> (8 * i));
  }
  XXH3_128bits_update(state, bytes.data(), bytes.size());
}
}  // namespace

DeflateBlockCache::DeflateBlockCache() : DeflateBlockCache(random_seed()) {}

DeflateBlockCache::DeflateBlockCache(std::uint64_t seed)
    : seed_(seed), state_(XXH3_createState(), &free_state) {
  // XXH3_state_t is opaque (its layout is not libxxhash's stable ABI): one,
  // made once, for every key.
  if (!state_) throw std::bad_alloc();
}

DeflateBlockCache::~DeflateBlockCache() = default;

void DeflateBlockCache::free_state(XXH3_state_s* state) { XXH3_freeState(state); }

DeflateBlockCache::Key DeflateBlockCache::key(int level, std::string_view dictionary,
                                              std::string_view block) const {
  // The dictionary's length goes in before its bytes: without it, moving a
  // byte from the end of the dictionary to the start of the block would
  // hash the same bytes in the same order.
  XXH3_state_t* state = state_.get();
  XXH3_128bits_reset_withSeed(state, seed_);
  update_u64(state, static_cast<std::uint64_t>(static_cast<std::int64_t>(level)));
  update_u64(state, dictionary.size());
  XXH3_128bits_update(state, dictionary.data(), dictionary.size());
  XXH3_128bits_update(state, block.data(), block.size());
  const XXH128_hash_t h = XXH3_128bits_digest(state);
  return Key{h.low64, h.high64};
}

std::shared_ptr<const DeflatedBlock> DeflateBlockCache::find(const Key& key) {
  if (auto it = current_.find(key); it != current_.end()) return it->second;
  auto it = previous_.find(key);
  if (it == previous_.end()) return nullptr;
  std::shared_ptr<const DeflatedBlock> block = it->second;
  previous_bytes_ -= block->bytes.size();
  previous_.erase(it);
  current_bytes_ += block->bytes.size();
  current_.emplace(key, block);
  return block;
}

void DeflateBlockCache::insert(const Key& key, const std::shared_ptr<const DeflatedBlock>& block) {
  if (!block) return;
  const std::size_t size = block->bytes.size();
  auto [it, inserted] = current_.try_emplace(key, block);
  // The same block twice in one compress (both missed before the first was
  // deflated): one copy is enough.
  if (inserted) current_bytes_ += size;
}

void DeflateBlockCache::end_generation() {
  previous_ = std::move(current_);
  previous_bytes_ = current_bytes_;
  current_ = Map();
  current_bytes_ = 0;
}

}  // namespace ibfx
