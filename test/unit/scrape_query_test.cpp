#include "daemon/scrape_query.h"

#include <catch2/catch.hpp>

using namespace ibfx;

TEST_CASE("parse_scrape_query reads repeated collect[] and node, decoded", "[scrape_query]") {
  const ScrapeQuery q = parse_scrape_query(
      "/metrics?collect[]=ports&collect%5B%5D=aggregates&node=leaf+01&node=0x0002c9&n=5&x=y");
  CHECK(q.error.empty());
  CHECK(q.collect == std::vector<std::string>{"ports", "aggregates"});
  CHECK(q.nodes == std::vector<std::string>{"leaf 01", "0x0002c9"});
  CHECK(q.n == "5");
}

TEST_CASE("parse_scrape_query without a query and with bad escapes", "[scrape_query]") {
  CHECK(parse_scrape_query("/metrics").collect.empty());
  CHECK(parse_scrape_query("/metrics?").nodes.empty());
  CHECK_FALSE(parse_scrape_query("/metrics?node=%zz").error.empty());
  CHECK_FALSE(parse_scrape_query("/metrics?node=%2").error.empty());
  CHECK(parse_scrape_query("/metrics?node=a%20b").nodes.front() == "a b");
}
