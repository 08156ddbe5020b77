#include "daemon/gzip.h"

#include <catch2/catch.hpp>
#include <stdexcept>
#include <string>

namespace {
std::string exposition_like(std::size_t lines) {
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
  const std::string text = exposition_like(20000);
  for (int level : {ibfx::kGzipFast, ibfx::kGzipDefault}) {
    ibfx::GzipWriter w(level);
    for (std::size_t off = 0; off < text.size(); off += 777)
      w.write(std::string_view(text).substr(off, 777));
    CHECK(w.bytes_in() == text.size());
    const std::string gz = w.finish();
    CHECK(static_cast<unsigned char>(gz[0]) == 0x1f);
    CHECK(static_cast<unsigned char>(gz[1]) == 0x8b);
    CHECK(gz.size() < text.size() / 4);
    CHECK(ibfx::gunzip(gz) == text);
    CHECK(ibfx::gunzip(ibfx::gzip_compress(text, level)) == text);
  }
  CHECK(ibfx::gunzip(ibfx::gzip_compress("")).empty());
}

TEST_CASE("GunzipReader hands out bounded pieces until the end", "[gzip]") {
  const std::string text = exposition_like(5000);
  const std::string gz = ibfx::gzip_compress(text, ibfx::kGzipFast);
  ibfx::GunzipReader r(gz);
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
  const std::string gz = ibfx::gzip_compress(exposition_like(2000));
  CHECK_THROWS_AS(ibfx::gunzip(gz.substr(0, gz.size() / 2)), std::runtime_error);
  CHECK_THROWS_AS(ibfx::gunzip("not gzip at all"), std::runtime_error);
  std::string flipped = gz;
  flipped[gz.size() / 2] = static_cast<char>(flipped[gz.size() / 2] ^ 0x5a);
  CHECK_THROWS_AS(ibfx::gunzip(flipped), std::runtime_error);
  CHECK_THROWS_AS(ibfx::gunzip(""), std::runtime_error);
}

TEST_CASE("ParallelGzipWriter makes one gzip member that inflates to the input", "[gzip]") {
  const std::string text = exposition_like(60000);  // ~5 MB: many blocks
  const std::size_t block = 128 * 1024;
  for (unsigned threads : {1u, 2u, 4u}) {
    for (std::size_t size :
         {std::size_t{0}, std::size_t{10}, block - 1, block, block + 1, 3 * block, text.size()}) {
      ibfx::ParallelGzipWriter w(ibfx::kGzipFast, threads, block);
      const std::string_view input = std::string_view(text).substr(0, size);
      for (std::size_t off = 0; off < input.size(); off += 50000) w.write(input.substr(off, 50000));
      CHECK(w.bytes_in() == size);
      const std::string gz = w.finish();
      // zlib checks the trailer's CRC-32 and length while inflating.
      CHECK(ibfx::gunzip(gz) == input);
    }
  }
  // Same block boundaries, same bytes, whatever the thread count; and the
  // preset dictionaries keep the ratio close to a single-threaded stream.
  ibfx::ParallelGzipWriter one(ibfx::kGzipFast, 1, block);
  ibfx::ParallelGzipWriter four(ibfx::kGzipFast, 4, block);
  one.write(text);
  four.write(text);
  const std::string a = one.finish();
  CHECK(a == four.finish());
  CHECK(static_cast<double>(a.size()) <
        1.05 * static_cast<double>(ibfx::gzip_compress(text, ibfx::kGzipFast).size()));
}
