// DeflateBlockCache and ParallelDeflater's content-defined cuts: the same
// bytes with or without the cache, unchanged text not deflated again, a
// change costing only the blocks around it, one generation kept.
#include "exposition/deflate_block_cache.h"

#include "http/gzip_writer.h"
#include "test/support/gunzip.h"

#define ZLIB_CONST
#include <zlib.h>

#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <vector>

#include "exposition/gzip.h"

namespace {
// Series like the exposition's: many lines, similar labels, values of
// varying width (so the lines vary in length).
std::string exposition_like(std::size_t lines, std::uint64_t salt = 0) {
  std::string s;
  s.reserve(lines * 96);
  for (std::size_t i = 0; i < lines; ++i) {
    s += "infiniband_port_transmit_data_bytes_total{node_guid=\"0x0002c9030000";
    s += std::to_string(i / 40);
    s += "\",port=\"";
    s += std::to_string(i % 40 + 1);
    s += "\"} ";
    s += std::to_string((i + salt) * 2654435761u % 100000007);
    s += '\n';
  }
  return s;
}

// Printable bytes without line ends: every block is cut at the maximum.
std::string no_lines(std::size_t size, unsigned seed) {
  std::mt19937 rng(seed);
  std::string s(size, '\0');
  for (char& c : s) c = static_cast<char>('a' + rng() % 26);
  return s;
}

std::string noise_bytes(std::size_t size, unsigned seed) {
  std::mt19937 rng(seed);
  std::string s(size, '\0');
  for (char& c : s) c = static_cast<char>(rng() & 0xff);
  return s;
}

std::uint32_t zlib_crc(const std::string& s) {
  return static_cast<std::uint32_t>(
      crc32(0, reinterpret_cast<const Bytef*>(s.data()), static_cast<uInt>(s.size())));
}

struct Compressed {
  std::vector<ibfx::DeflateRun> runs;
  std::size_t reused = 0;
  std::size_t deflated = 0;
  std::uint64_t reused_bytes = 0;
  std::uint64_t deflated_bytes = 0;
};

// `texts` as one run each, written in pieces of `piece` bytes (which do not
// line up with any block), then the cache's generation ended.
Compressed compress(const std::vector<std::string>& texts, ibfx::DeflateBlockCache* cache,
                    std::size_t block = ibfx::kDeflateBlockBytes, unsigned threads = 2,
                    std::size_t piece = 70001) {
  ibfx::ParallelDeflater deflater(ibfx::kGzipFast, threads, block, cache);
  for (std::size_t i = 0; i < texts.size(); ++i) {
    if (i > 0) deflater.end_run();
    for (std::size_t off = 0; off < texts[i].size(); off += piece) {
      deflater.write(std::string_view(texts[i]).substr(off, piece));
    }
  }
  Compressed out;
  out.runs = deflater.finish();
  if (cache != nullptr) cache->end_generation();
  out.reused = deflater.blocks_reused();
  out.deflated = deflater.blocks_deflated();
  out.reused_bytes = deflater.reused_bytes();
  out.deflated_bytes = deflater.deflated_bytes();
  return out;
}

std::vector<const ibfx::DeflateRun*> all(const std::vector<ibfx::DeflateRun>& runs) {
  std::vector<const ibfx::DeflateRun*> out;
  for (const ibfx::DeflateRun& r : runs) out.push_back(&r);
  return out;
}

std::string read_runs(const std::vector<const ibfx::DeflateRun*>& runs) {
  ibfx::DeflateRunReader reader(runs);
  std::string text, piece;
  bool more = true;
  while (more) {
    more = reader.read(piece, 100000);
    text += piece;
  }
  return text;
}

// Every run inflates to its text, with its CRC and length; all of them
// together are one gzip member of the whole text.
void check_runs(const std::vector<ibfx::DeflateRun>& runs, const std::vector<std::string>& texts) {
  REQUIRE(runs.size() == texts.size());
  std::string whole;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    INFO("run " << i);
    CHECK(runs[i].length == texts[i].size());
    CHECK(runs[i].crc == zlib_crc(texts[i]));
    CHECK(read_runs({&runs[i]}) == texts[i]);
    whole += texts[i];
  }
  CHECK(read_runs(all(runs)) == whole);
  CHECK(ibfx::test::gunzip(ibfx::test::gzip_member(all(runs))) == whole);
}

std::size_t compressed_size(const std::vector<ibfx::DeflateRun>& runs) {
  std::size_t n = 0;
  for (const ibfx::DeflateRun& r : runs) n += r.bytes.size();
  return n;
}
}  // namespace

TEST_CASE("DeflateBlockCache keys tell level, dictionary and block apart", "[deflate_cache]") {
  ibfx::DeflateBlockCache cache(42);
  const auto k = cache.key(1, "dict", "block");
  CHECK(k == cache.key(1, "dict", "block"));
  CHECK_FALSE(k == cache.key(6, "dict", "block"));
  CHECK_FALSE(k == cache.key(1, "dicx", "block"));
  CHECK_FALSE(k == cache.key(1, "dict", "blocx"));
  // The same bytes split differently between dictionary and block.
  CHECK_FALSE(k == cache.key(1, "dic", "tblock"));
  CHECK_FALSE(cache.key(1, "", "ab") == cache.key(1, "a", "b"));
  // Another seed, other keys (a per-process secret).
  CHECK_FALSE(k == ibfx::DeflateBlockCache(43).key(1, "dict", "block"));
  CHECK_FALSE(ibfx::DeflateBlockCache().key(1, "dict", "block") ==
              ibfx::DeflateBlockCache().key(1, "dict", "block"));
}

TEST_CASE("DeflateBlockCache keeps what the last generation used, nothing older",
          "[deflate_cache]") {
  ibfx::DeflateBlockCache cache(7);
  auto block = [](const std::string& bytes) {
    auto b = std::make_shared<ibfx::DeflatedBlock>();
    b->bytes = bytes;
    return b;
  };
  const auto a = cache.key(1, "", "a");
  const auto b = cache.key(1, "", "b");
  CHECK(cache.find(a) == nullptr);
  cache.insert(a, block("AAAA"));
  cache.insert(b, block("BB"));
  CHECK(cache.find(a)->bytes == "AAAA");  // the same generation
  cache.end_generation();
  CHECK(cache.blocks() == 2);
  CHECK(cache.compressed_bytes() == 6);
  // Only a is used by the next one: b goes when it ends.
  CHECK(cache.find(a)->bytes == "AAAA");
  cache.end_generation();
  CHECK(cache.blocks() == 1);
  CHECK(cache.compressed_bytes() == 4);
  CHECK(cache.find(b) == nullptr);
  cache.end_generation();
  CHECK(cache.blocks() == 0);
  CHECK(cache.compressed_bytes() == 0);
}

TEST_CASE("ParallelDeflater with or without a cache: the same text, CRC and length",
          "[deflate_cache][gzip]") {
  const std::vector<std::string> texts{exposition_like(40000), "",    noise_bytes(700000, 1),
                                       no_lines(1300000, 2),   "x\n", exposition_like(3000, 5)};
  for (std::size_t block :
       {std::size_t{64} << 10, std::size_t{100} << 10, ibfx::kDeflateBlockBytes}) {
    for (unsigned threads : {1u, 2u}) {
      INFO("block " << block << ", threads " << threads);
      const Compressed plain = compress(texts, nullptr, block, threads);
      check_runs(plain.runs, texts);
      CHECK(plain.reused == 0);
      ibfx::DeflateBlockCache cache;
      const Compressed first = compress(texts, &cache, block, threads);
      check_runs(first.runs, texts);
      // Pieces of another size: the cuts depend on the text only.
      const Compressed second = compress(texts, &cache, block, threads, 4099);
      check_runs(second.runs, texts);
      for (std::size_t i = 0; i < texts.size(); ++i) {
        CHECK(first.runs[i].bytes == plain.runs[i].bytes);
        CHECK(second.runs[i].bytes == plain.runs[i].bytes);
      }
      CHECK(second.deflated == 0);
    }
  }
}

TEST_CASE("The same text compressed twice with one cache is not deflated again",
          "[deflate_cache][gzip]") {
  const std::vector<std::string> texts{exposition_like(50000), exposition_like(20000, 9)};
  ibfx::DeflateBlockCache cache;
  const Compressed first = compress(texts, &cache);
  CHECK(first.reused == 0);
  CHECK(first.deflated > 10);
  CHECK(first.deflated_bytes == texts[0].size() + texts[1].size());
  const Compressed second = compress(texts, &cache);
  CHECK(second.deflated == 0);
  CHECK(second.deflated_bytes == 0);
  CHECK(second.reused == first.deflated);
  CHECK(second.reused_bytes == texts[0].size() + texts[1].size());
  for (std::size_t i = 0; i < texts.size(); ++i) {
    CHECK(second.runs[i].bytes == first.runs[i].bytes);
    CHECK(second.runs[i].crc == first.runs[i].crc);
    CHECK(second.runs[i].length == first.runs[i].length);
  }
  // The cache holds one snapshot's blocks: their compressed size.
  CHECK(cache.blocks() == first.deflated);
  CHECK(cache.compressed_bytes() == compressed_size(first.runs));
}

TEST_CASE("One value changed in a big text deflates only the blocks around it again",
          "[deflate_cache][gzip]") {
  // ~6.5 MB, about twenty blocks: enough for a change in the middle and
  // near either end to leave most of them alone (20 MB proved nothing more
  // and took 20 s, 12 compressions and their checks).
  const std::string text = exposition_like(70000);
  REQUIRE(text.size() > 6'000'000);
  ibfx::DeflateBlockCache cache;
  const Compressed first = compress({text}, &cache);
  REQUIRE(first.deflated > 15);
  // Values that grow a digit ("999" -> "1000") or keep their width, in the
  // middle, near the start and near the end.
  for (std::size_t at : {text.size() / 2, std::size_t{300000}, text.size() - 5000}) {
    const std::size_t line = text.rfind('\n', at) + 1;
    const std::size_t value = text.find("} ", line) + 2;
    const std::size_t end = text.find('\n', value);
    const std::string old_value = text.substr(value, end - value);
    std::string same_width = old_value;
    same_width.back() = static_cast<char>('0' + (same_width.back() - '0' + 1) % 10);
    for (const std::string& replacement :
         {old_value + "0", std::string("1000"), std::string("7"), same_width}) {
      INFO("at " << at << ", value " << replacement);
      std::string changed = text;
      changed.replace(value, end - value, replacement);
      const Compressed again = compress({changed}, &cache);
      check_runs(again.runs, {changed});
      // The changed block, the next one (its dictionary changed), maybe one
      // more before the cuts are the same again.
      CHECK(again.deflated >= 1);
      CHECK(again.deflated <= 3);
      CHECK(again.reused + again.deflated >= first.deflated - 2);
      // And back: the original text's blocks are the ones around the change
      // the last generation lacked.
      const Compressed back = compress({text}, &cache);
      CHECK(back.deflated <= 3);
      CHECK(back.runs[0].bytes == first.runs[0].bytes);
    }
  }
}

TEST_CASE("A block after a changed one is deflated again: its dictionary changed",
          "[deflate_cache][gzip]") {
  // No line ends: every block is cut at the maximum, 8 x 64 kB, so where the
  // blocks are is known. Three of them.
  const std::size_t block = std::size_t{64} << 10;
  const std::size_t max = 8 * block;
  const std::string text = no_lines(3 * max, 3);
  ibfx::DeflateBlockCache cache;
  const Compressed first = compress({text}, &cache, block);
  REQUIRE(first.deflated == 3);

  // A byte in the last 32 kB of the first block: that block, and the second
  // (the same bytes, another dictionary), are deflated; the third is not.
  std::string late = text;
  late[max - 100] = '#';
  Compressed c = compress({late}, &cache, block);
  check_runs(c.runs, {late});
  CHECK(c.deflated == 2);
  CHECK(c.reused == 1);
  CHECK(c.reused_bytes == max);

  // A byte early in the first block leaves the second's dictionary as it
  // was: only the first is deflated. (The cache now holds `late`'s blocks.)
  std::string early = text;
  early[100] = '#';
  c = compress({text}, &cache, block);  // back to the original's blocks
  CHECK(c.deflated == 2);
  c = compress({early}, &cache, block);
  check_runs(c.runs, {early});
  CHECK(c.deflated == 1);
  CHECK(c.reused == 2);

  // The first block of a run has no dictionary: the same text as the run's
  // second block is not the same block.
  const std::string tail = text.substr(max, max);
  c = compress({tail}, &cache, block);
  check_runs(c.runs, {tail});
  CHECK(c.deflated == 1);
}

TEST_CASE("The cache holds only the blocks of the latest compress", "[deflate_cache][gzip]") {
  const std::vector<std::string> a{exposition_like(30000, 1)};
  const std::vector<std::string> b{exposition_like(10000, 2)};
  ibfx::DeflateBlockCache cache;
  const Compressed ca = compress(a, &cache);
  CHECK(cache.blocks() == ca.deflated);
  CHECK(cache.compressed_bytes() == compressed_size(ca.runs));
  // An unrelated text: nothing reused, and nothing of `a` left after it.
  const Compressed cb = compress(b, &cache);
  CHECK(cb.reused == 0);
  CHECK(cache.blocks() == cb.deflated);
  CHECK(cache.compressed_bytes() == compressed_size(cb.runs));
  const Compressed again = compress(a, &cache);
  CHECK(again.reused == 0);
  CHECK(again.runs[0].bytes == ca.runs[0].bytes);
}

TEST_CASE("Content-defined cuts cost little ratio against one stream", "[deflate_cache][gzip]") {
  const std::string text = exposition_like(100000);
  const Compressed c = compress({text}, nullptr);
  // Blocks of 256 kB to 2 MB, each with the 32 kB before it as dictionary.
  CHECK(c.deflated >= text.size() / (std::size_t{2} << 20));
  CHECK(c.deflated <= text.size() / (std::size_t{256} << 10) + 1);
  CHECK(static_cast<double>(compressed_size(c.runs) + 12) <
        1.05 * static_cast<double>(ibfx::gzip_compress(text, ibfx::kGzipFast).size()));
}
