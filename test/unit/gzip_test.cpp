#include "exposition/gzip.h"

#include <unistd.h>

#include "http/gzip_writer.h"
#include "test/support/gunzip.h"
#define ZLIB_CONST
#include <zlib.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {
std::string exposition_text(std::size_t lines) {
  std::string s;
  for (std::size_t i = 0; i < lines; ++i) {
    s += "infiniband_port_transmit_wait_total{node_guid=\"0x0002c9030000" +
         std::to_string(i % 977) + "\",port=\"" + std::to_string(i % 64) + "\"} " +
         std::to_string(i * 2654435761u % 1000003) + "\n";
  }
  return s;
}
}  // namespace

TEST_CASE("GzipWriter fed in pieces equals one-shot compression after inflating", "[gzip]") {
  const std::string text = exposition_text(20000);
  for (int level : {ibfx::kGzipFast, ibfx::kGzipDefault}) {
    ibfx::GzipWriter w(level);
    for (std::size_t off = 0; off < text.size(); off += 777)
      w.write(std::string_view(text).substr(off, 777));
    CHECK(w.bytes_in() == text.size());
    const std::string gz = w.finish();
    CHECK(static_cast<unsigned char>(gz[0]) == 0x1f);
    CHECK(static_cast<unsigned char>(gz[1]) == 0x8b);
    CHECK(gz.size() < text.size() / 4);
    CHECK(ibfx::test::gunzip(gz) == text);
    CHECK(ibfx::test::gunzip(ibfx::gzip_compress(text, level)) == text);
  }
  CHECK(ibfx::test::gunzip(ibfx::gzip_compress("")).empty());
}

TEST_CASE("GunzipReader hands out bounded pieces until the end", "[gzip]") {
  const std::string text = exposition_text(5000);
  const std::string gz = ibfx::gzip_compress(text, ibfx::kGzipFast);
  ibfx::test::GunzipReader r(gz);
  std::string joined;
  std::string piece;
  bool more = true;
  int calls = 0;
  while (more) {
    more = r.read(piece, 4096);
    CHECK(piece.size() <= 4096);
    joined += piece;
    REQUIRE(++calls < 100000);
  }
  CHECK(joined == text);
  // After the end it stays ended and yields nothing.
  CHECK_FALSE(r.read(piece, 4096));
  CHECK(piece.empty());
}

TEST_CASE("GunzipReader rejects truncated and corrupt input", "[gzip]") {
  const std::string gz = ibfx::gzip_compress(exposition_text(2000));
  CHECK_THROWS_AS(ibfx::test::gunzip(gz.substr(0, gz.size() / 2)), std::runtime_error);
  CHECK_THROWS_AS(ibfx::test::gunzip("not gzip at all"), std::runtime_error);
  std::string flipped = gz;
  flipped[gz.size() / 2] = static_cast<char>(flipped[gz.size() / 2] ^ 0x5a);
  CHECK_THROWS_AS(ibfx::test::gunzip(flipped), std::runtime_error);
  CHECK_THROWS_AS(ibfx::test::gunzip(""), std::runtime_error);
}

TEST_CASE("ParallelGzipWriter makes one gzip member that inflates to the input", "[gzip]") {
  const std::string text = exposition_text(60000);  // ~5 MB: many blocks
  const std::size_t block = 128 * 1024;
  for (unsigned threads : {1u, 2u, 4u}) {
    for (std::size_t size :
         {std::size_t{0}, std::size_t{10}, block - 1, block, block + 1, 3 * block, text.size()}) {
      ibfx::test::ParallelGzipWriter w(ibfx::kGzipFast, threads, block);
      const std::string_view input = std::string_view(text).substr(0, size);
      for (std::size_t off = 0; off < input.size(); off += 50000) w.write(input.substr(off, 50000));
      CHECK(w.bytes_in() == size);
      const std::string gz = w.finish();
      // zlib checks the trailer's CRC-32 and length while inflating.
      CHECK(ibfx::test::gunzip(gz) == input);
    }
  }
  // Same block boundaries, same bytes, whatever the thread count; and the
  // preset dictionaries keep the ratio close to a single-threaded stream.
  ibfx::test::ParallelGzipWriter one(ibfx::kGzipFast, 1, block);
  ibfx::test::ParallelGzipWriter four(ibfx::kGzipFast, 4, block);
  one.write(text);
  four.write(text);
  const std::string a = one.finish();
  CHECK(a == four.finish());
  CHECK(static_cast<double>(a.size()) <
        1.05 * static_cast<double>(ibfx::gzip_compress(text, ibfx::kGzipFast).size()));
}

namespace {
// The text of the runs flagged by the bits of `mask`, in order.
std::string selected_text(const std::vector<std::string>& texts, unsigned mask) {
  std::string s;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    if ((mask >> i) & 1u) s += texts[i];
  }
  return s;
}

std::vector<const ibfx::DeflateRun*> selected_runs(const std::vector<ibfx::DeflateRun>& runs,
                                                   unsigned mask) {
  std::vector<const ibfx::DeflateRun*> out;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if ((mask >> i) & 1u) out.push_back(&runs[i]);
  }
  return out;
}

std::uint32_t le32(const std::string& s, std::size_t at) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
  return v;
}

// The system's gzip(1), its own inflate and its own CRC and length checks.
std::string system_gunzip(const std::string& gz) {
  const std::string path = "/tmp/ibfx_gzip_test_" + std::to_string(::getpid()) + ".gz";
  std::ofstream(path, std::ios::binary) << gz;
  std::string out;
  FILE* p = ::popen(("gzip -dc < " + path + " 2>/dev/null").c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[65536];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int status = ::pclose(p);
  std::remove(path.c_str());
  CHECK(status == 0);
  return out;
}

// Inflates a gzip member with zlib (which checks CRC and ISIZE) and says how
// many bytes follow the member's end: 0 for a single member.
std::size_t bytes_after_first_member(const std::string& gz) {
  z_stream zs{};
  REQUIRE(inflateInit2(&zs, 15 + 16) == Z_OK);
  zs.next_in = reinterpret_cast<const Bytef*>(gz.data());
  zs.avail_in = static_cast<uInt>(gz.size());
  std::string sink(1 << 16, '\0');
  int rc = Z_OK;
  while (rc == Z_OK) {
    zs.next_out = reinterpret_cast<Bytef*>(sink.data());
    zs.avail_out = static_cast<uInt>(sink.size());
    rc = inflate(&zs, Z_NO_FLUSH);
  }
  CHECK(rc == Z_STREAM_END);
  const std::size_t left = zs.avail_in;
  inflateEnd(&zs);
  return left;
}
}  // namespace

TEST_CASE("Any selection of deflate runs is one gzip member of their texts", "[gzip]") {
  // Four runs like the exposition's groups: one spanning several blocks, an
  // empty one, one shorter than a block, one of exactly a block.
  const std::size_t block = 64 * 1024;
  const std::string big = exposition_text(40000);  // ~3.4 MB
  const std::vector<std::string> texts{big.substr(0, 5 * block + 123), "", big.substr(1000, 777),
                                       big.substr(7, block)};
  for (unsigned threads : {1u, 2u}) {
    ibfx::ParallelDeflater deflater(ibfx::kGzipFast, threads, block);
    for (std::size_t i = 0; i < texts.size(); ++i) {
      if (i > 0) deflater.end_run();
      // Fed in pieces that do not line up with the blocks.
      for (std::size_t off = 0; off < texts[i].size(); off += 40000) {
        deflater.write(std::string_view(texts[i]).substr(off, 40000));
      }
    }
    const std::vector<ibfx::DeflateRun> runs = deflater.finish();
    REQUIRE(runs.size() == texts.size());
    for (std::size_t i = 0; i < texts.size(); ++i) {
      CHECK(runs[i].length == texts[i].size());
      CHECK(runs[i].crc == crc32(0, reinterpret_cast<const Bytef*>(texts[i].data()),
                                 static_cast<uInt>(texts[i].size())));
    }
    CHECK(runs[1].bytes.empty());
    // Each run compresses: the 32 kB dictionaries stay inside a run.
    CHECK(runs[0].bytes.size() < texts[0].size() / 4);

    for (unsigned mask = 0; mask < (1u << texts.size()); ++mask) {
      INFO("threads " << threads << ", runs " << mask);
      const std::string expected = selected_text(texts, mask);
      const auto selection = selected_runs(runs, mask);
      ibfx::GzipMember member(selection);
      const std::string gz = ibfx::test::gzip_member(selection);
      CHECK(gz.size() == member.size());
      CHECK(member.text_size() == expected.size());
      // Header, the runs' bytes untouched, the empty final block, trailer.
      CHECK(gz.compare(0, 4, "\x1f\x8b\x08\x00", 4) == 0);
      std::size_t at = 10;
      for (const ibfx::DeflateRun* r : selection) {
        CHECK(gz.compare(at, r->bytes.size(), r->bytes) == 0);
        at += r->bytes.size();
      }
      CHECK(gz.compare(at, 2, "\x03\x00", 2) == 0);
      const auto crc = static_cast<std::uint32_t>(crc32(
          0, reinterpret_cast<const Bytef*>(expected.data()), static_cast<uInt>(expected.size())));
      CHECK(member.crc() == crc);
      CHECK(le32(gz, gz.size() - 8) == crc);
      CHECK(le32(gz, gz.size() - 4) == static_cast<std::uint32_t>(expected.size()));
      // zlib's inflate (checking CRC and ISIZE) and the system's gzip agree,
      // and it is ONE member: nothing after its trailer.
      CHECK(ibfx::test::gunzip(gz) == expected);
      CHECK(bytes_after_first_member(gz) == 0);
      CHECK(system_gunzip(gz) == expected);
      // The identity side: the same runs inflated piece by piece.
      ibfx::DeflateRunReader reader(selection);
      std::string text, piece;
      bool more = true;
      while (more) {
        more = reader.read(piece, 10000);
        CHECK(piece.size() <= 10000);
        text += piece;
      }
      CHECK(text == expected);
    }
  }
}

TEST_CASE("GzipMember streams bounded pieces that add up to its size", "[gzip]") {
  ibfx::ParallelDeflater deflater(ibfx::kGzipFast, 2, 64 * 1024);
  deflater.write(exposition_text(3000));
  deflater.end_run();
  deflater.write(exposition_text(10));
  const std::vector<ibfx::DeflateRun> runs = deflater.finish();
  for (std::size_t max :
       {std::size_t{1}, std::size_t{7}, std::size_t{4096}, std::size_t{1} << 20}) {
    ibfx::GzipMember member({&runs[0], &runs[1]});
    std::string all, piece;
    bool more = true;
    while (more) {
      more = member.read(piece, max);
      CHECK(piece.size() <= max);
      all += piece;
    }
    CHECK(all.size() == member.size());
    CHECK(ibfx::test::gunzip(all) == exposition_text(3000) + exposition_text(10));
    CHECK_FALSE(member.read(piece, max));
    CHECK(piece.empty());
  }
  // No runs at all: a valid member of the empty text.
  const std::string empty = ibfx::test::gzip_member({});
  CHECK(empty.size() == 20);
  CHECK(ibfx::test::gunzip(empty).empty());
  CHECK(system_gunzip(empty).empty());
}

TEST_CASE("DeflateRunReader rejects a corrupt or short run", "[gzip]") {
  ibfx::ParallelDeflater deflater(ibfx::kGzipFast, 1);
  deflater.write(exposition_text(2000));
  std::vector<ibfx::DeflateRun> runs = deflater.finish();
  ibfx::DeflateRun cut = runs[0];
  cut.bytes.resize(cut.bytes.size() / 2);
  CHECK_THROWS_AS(
      [&] {
        ibfx::DeflateRunReader r({&cut});
        std::string piece;
        while (r.read(piece, 1 << 16)) {
        }
      }(),
      std::runtime_error);
  ibfx::DeflateRun garbage = runs[0];
  for (std::size_t i = 0; i < garbage.bytes.size(); i += 3) garbage.bytes[i] = '\xff';
  CHECK_THROWS_AS(
      [&] {
        ibfx::DeflateRunReader r({&garbage});
        std::string piece;
        while (r.read(piece, 1 << 16)) {
        }
      }(),
      std::runtime_error);
}
