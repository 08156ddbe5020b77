// ExpositionWriter: the text format 0.0.4 lines it writes (HELP escaping,
// label escaping, integer and float values), streaming in chunks that add up
// to the same text, and the index of family headers and node runs.
#include "exposition/exposition.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

using namespace ibfx;

TEST_CASE("ExpositionWriter writes HELP, TYPE and samples in the text format", "[exposition]") {
  std::string out;
  ExpositionWriter w(out);
  w.family("ib_x_total", "Counts \\ things\nsecond line \"quoted\".", "counter");
  std::string labels;
  ExpositionWriter::add_label(labels, "node_name", "sw \"a\"\\b\nc");
  ExpositionWriter::add_label(labels, "port", "3");
  w.sample("ib_x_total", labels, std::uint64_t{18446744073709551615ull});
  w.sample("ib_x_total", "", std::uint64_t{0});
  w.sample("ib_y", "", 0.25);
  w.sample("ib_y", "", std::numeric_limits<double>::quiet_NaN());
  w.sample("ib_y", "", std::numeric_limits<double>::infinity());
  w.sample("ib_y", "", -std::numeric_limits<double>::infinity());
  w.sample("ib_y", "a=\"1\"", "le", "0.5", 2.0);
  w.sample("ib_y", "", "le", "+Inf", 3.0);
  // HELP escapes backslash and newline only; label values also the quote.
  CHECK(out ==
        "# HELP ib_x_total Counts \\\\ things\\nsecond line \"quoted\".\n"
        "# TYPE ib_x_total counter\n"
        "ib_x_total{node_name=\"sw \\\"a\\\"\\\\b\\nc\",port=\"3\"} 18446744073709551615\n"
        "ib_x_total 0\n"
        "ib_y 0.25\n"
        "ib_y NaN\n"
        "ib_y +Inf\n"
        "ib_y -Inf\n"
        "ib_y{a=\"1\",le=\"0.5\"} 2\n"
        "ib_y{le=\"+Inf\"} 3\n");
  CHECK(w.offset() == out.size());
}

TEST_CASE("ExpositionWriter streams whole lines in chunks that add up to the text",
          "[exposition]") {
  auto write = [](ExpositionWriter& w) {
    w.family("ib_a", "A.", "gauge");
    for (int i = 0; i < 50; ++i) {
      std::string l;
      ExpositionWriter::add_label(l, "i", std::to_string(i));
      w.sample("ib_a", l, static_cast<std::uint64_t>(i) * 1000);
    }
    w.text("ib_b 1\nib_b{x=\"y\"} 2\n");
    w.flush();
  };
  std::string whole;
  ExpositionWriter one(whole);
  write(one);

  std::string buffer;
  std::vector<std::string> chunks;
  ExpositionWriter streaming(
      buffer, [&](std::string_view c) { chunks.emplace_back(c); }, 64);
  write(streaming);
  REQUIRE(chunks.size() > 5);
  std::string joined;
  for (const std::string& c : chunks) {
    CHECK(c.size() >= 1);
    CHECK(c.back() == '\n');  // never a line cut in two
    joined += c;
  }
  CHECK(buffer.empty());  // flush() handed over the rest
  CHECK(joined == whole);
  CHECK(streaming.offset() == whole.size());
}

TEST_CASE("ExpositionWriter's index holds every family header and each node's runs",
          "[exposition]") {
  std::string out;
  ExpositionIndex index;
  ExpositionWriter w(out);
  w.set_index(&index);
  w.family("ib_a", "A.", "gauge");
  w.node(0);
  w.sample("ib_a", "n=\"0\"", std::uint64_t{1});
  w.sample("ib_a", "n=\"0\",p=\"1\"", std::uint64_t{2});
  w.node(1);
  w.sample("ib_a", "n=\"1\"", std::uint64_t{3});
  w.family("ib_b", "B.", "counter");
  w.node(ExpositionIndex::kNoNode);
  w.sample("ib_b", "", std::uint64_t{4});  // fabric-wide: in no run
  w.node(1);
  w.sample("ib_b", "n=\"1\"", std::uint64_t{5});
  w.node(0);
  w.sample("ib_b", "n=\"0\"", std::uint64_t{6});
  w.flush();

  auto text_of = [&](ExpositionIndex::Range r) { return out.substr(r.begin, r.end - r.begin); };
  REQUIRE(index.families.size() == 2);
  CHECK(text_of(index.families[0]) == "# HELP ib_a A.\n# TYPE ib_a gauge\n");
  CHECK(text_of(index.families[1]) == "# HELP ib_b B.\n# TYPE ib_b counter\n");
  REQUIRE(index.runs.size() == 4);
  CHECK(index.runs[0].node == 0);
  CHECK(index.runs[0].family == 0);
  CHECK(text_of(index.runs[0].bytes) == "ib_a{n=\"0\"} 1\nib_a{n=\"0\",p=\"1\"} 2\n");
  CHECK(index.runs[1].node == 1);
  CHECK(text_of(index.runs[1].bytes) == "ib_a{n=\"1\"} 3\n");
  CHECK(index.runs[2].node == 1);
  CHECK(index.runs[2].family == 1);
  CHECK(text_of(index.runs[2].bytes) == "ib_b{n=\"1\"} 5\n");
  CHECK(index.runs[3].node == 0);
  CHECK(text_of(index.runs[3].bytes) == "ib_b{n=\"0\"} 6\n");
  CHECK(index.size == out.size());
}

TEST_CASE("ExpositionWriter's index offsets count the bytes already streamed", "[exposition]") {
  std::string buffer, whole;
  ExpositionIndex index;
  ExpositionWriter w(
      buffer, [&](std::string_view c) { whole += c; }, 16);
  w.set_index(&index);
  for (std::uint32_t n = 0; n < 4; ++n) {
    w.family("ib_f" + std::to_string(n), "F.", "gauge");
    w.node(n);
    w.sample("ib_f" + std::to_string(n), "", std::uint64_t{n});
  }
  w.flush();
  REQUIRE(index.runs.size() == 4);
  for (std::uint32_t n = 0; n < 4; ++n) {
    const auto& r = index.runs[n].bytes;
    CHECK(whole.substr(r.begin, r.end - r.begin) ==
          "ib_f" + std::to_string(n) + " " + std::to_string(n) + "\n");
  }
  CHECK(index.size == whole.size());
}

TEST_CASE("append_escaped escapes backslash, quote and newline only", "[exposition]") {
  std::string out = "x=";
  append_escaped(out, "a\\b\"c\nd\te");
  CHECK(out == "x=a\\\\b\\\"c\\nd\te");
}
