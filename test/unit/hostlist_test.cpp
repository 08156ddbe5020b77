#include "jobs/hostlist.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace {

using Hosts = std::vector<std::string>;

Hosts expand(const std::string& text, std::size_t max = 1'000'000) {
  const ibfx::HostlistExpansion e = ibfx::expand_hostlist(text, max);
  INFO(e.error);
  REQUIRE(e.ok());
  return e.hosts;
}

std::string hostlist_error(const std::string& text, std::size_t max = 1'000'000) {
  const ibfx::HostlistExpansion e = ibfx::expand_hostlist(text, max);
  CHECK(e.hosts.empty());
  return e.error;
}

}  // namespace

// Every expected list below is what `scontrol show hostnames` of Slurm 22.05
// prints for the same expression.
TEST_CASE("hostlist: ranges, lists, zero padding", "[hostlist]") {
  CHECK(expand("g[00000-00003,00007],h01") ==
        Hosts{"g00000", "g00001", "g00002", "g00003", "g00007", "h01"});
  CHECK(expand("a[8-10]") == Hosts{"a8", "a9", "a10"});
  CHECK(expand("a[08-10]") == Hosts{"a08", "a09", "a10"});
  // The lower bound's digits give the width, whatever the upper bound's.
  CHECK(expand("a[01-2]") == Hosts{"a01", "a02"});
  CHECK(expand("a[1-02]") == Hosts{"a1", "a2"});
  CHECK(expand("a[0001-3],b") == Hosts{"a0001", "a0002", "a0003", "b"});
  CHECK(expand("g00[1-2]") == Hosts{"g001", "g002"});
  CHECK(expand("a[1]") == Hosts{"a1"});
  CHECK(expand("a[0-0]") == Hosts{"a0"});
  CHECK(expand("a[1-2,5-6]") == Hosts{"a1", "a2", "a5", "a6"});
  CHECK(expand("a[99999999999-100000000000]") == Hosts{"a99999999999", "a100000000000"});
  CHECK(expand("a[18446744073709551615]") == Hosts{"a18446744073709551615"});
  CHECK(expand("[1-2]") == Hosts{"1", "2"});
}

TEST_CASE("hostlist: several brackets are a cartesian product, left slowest", "[hostlist]") {
  CHECK(expand("r[1-2]n[01-02]") == Hosts{"r1n01", "r1n02", "r2n01", "r2n02"});
  CHECK(expand("a[9-11]x[1-2]") == Hosts{"a9x1", "a9x2", "a10x1", "a10x2", "a11x1", "a11x2"});
  CHECK(expand("a[1-2][3-4]") == Hosts{"a13", "a14", "a23", "a24"});
  CHECK(expand("a[1-2]-ib[1]") == Hosts{"a1-ib1", "a2-ib1"});
}

TEST_CASE("hostlist: separators, empty entries, order and duplicates", "[hostlist]") {
  CHECK(expand("").empty());
  CHECK(expand(",,, ").empty());
  CHECK(expand("a,,b") == Hosts{"a", "b"});
  CHECK(expand(",a") == Hosts{"a"});
  CHECK(expand("a[1-2],") == Hosts{"a1", "a2"});
  CHECK(expand(" a , b ") == Hosts{"a", "b"});
  CHECK(expand("a b\tc\n") == Hosts{"a", "b", "c"});
  CHECK(expand("a[2,1,2]") == Hosts{"a2", "a1", "a2"});
  CHECK(expand("a[1-2],a[2-3]") == Hosts{"a1", "a2", "a2", "a3"});
  CHECK(expand("a[1-2],[3]") == Hosts{"a1", "a2", "3"});
  CHECK(expand("a1-2") == Hosts{"a1-2"});  // a dash outside brackets is a name
}

TEST_CASE("hostlist: what Slurm rejects is an error naming the host", "[hostlist]") {
  CHECK(hostlist_error("x[3-1]") == "host \"x[3-1]\": invalid range \"3-1\" (end before start)");
  CHECK(hostlist_error("a[]").find("invalid range \"\"") != std::string::npos);
  CHECK(hostlist_error("a[1,,2]").find("invalid range \"\"") != std::string::npos);
  CHECK(hostlist_error("a[-1]").find("invalid range \"-1\"") != std::string::npos);
  CHECK(hostlist_error("a[1-3x]").find("invalid range \"1-3x\"") != std::string::npos);
  CHECK(hostlist_error("a[ 1-2]").find("invalid range") != std::string::npos);
  CHECK(hostlist_error("a[1-2-3]").find("invalid range") != std::string::npos);
  CHECK(hostlist_error("a[1-3]b") == "host \"a[1-3]b\": text after the last ']'");
  CHECK(hostlist_error("a[1-2],b[1-2]c").find("b[1-2]c") != std::string::npos);
  CHECK(hostlist_error("a[1-3") == "host \"a[1-3\": '[' without ']'");
  CHECK(hostlist_error("a]") == "host \"a]\": ']' without '['");
  CHECK(hostlist_error("a[1-2]]") == "host \"a[1-2]]\": ']' without '['");
  CHECK(hostlist_error("a[[1-2]]") == "host \"a[[1-2]]\": nested '['");
  CHECK(hostlist_error("a[1-18446744073709551616]").find("invalid range") != std::string::npos);
  // Untrusted text is escaped in the message.
  CHECK(hostlist_error("a[\x01]").find("\\x01") != std::string::npos);
}

TEST_CASE("hostlist: bounded", "[hostlist]") {
  // One range: at most Slurm's MAX_RANGE.
  CHECK(expand("a[1-65536]").size() == 65536);
  CHECK(hostlist_error("a[1-70000]") ==
        "host \"a[1-70000]\": range \"1-70000\" holds more than 65536 hosts");
  // The whole expression: at most max_hosts, however it is spelt.
  CHECK(expand("a[1-10]", 10).size() == 10);
  CHECK(hostlist_error("a[1-10]", 9).find("more than 9 hosts") != std::string::npos);
  CHECK(hostlist_error("a[1-65536]b[1-65536]", 1'000'000).find("more than 1000000 hosts") !=
        std::string::npos);
  CHECK(hostlist_error("a,b,c", 2).find("more than 2 hosts") != std::string::npos);
}
