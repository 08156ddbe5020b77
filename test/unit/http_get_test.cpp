// The one-shot GET a client of another service makes (http/http_get.h):
// what it sends, and each way it can end (answered, timed out, failed).
#include "http/http_get.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <string>

#include "test/support/fake_http_server.h"
#include "test/support/temp_dir.h"

using namespace std::chrono_literals;
using ibfx::HttpGetRequest;
using ibfx::HttpGetResult;

namespace {

HttpGetRequest get_request(const std::string& url, std::chrono::milliseconds timeout = 2000ms) {
  HttpGetRequest r;
  r.url = url;
  r.target = "/a/b";
  r.headers = {{"Accept", "application/json"}, {"X-Extra", "1"}};
  r.body_limit = 1000;
  r.deadline = std::chrono::steady_clock::now() + timeout;
  return r;
}

}  // namespace

TEST_CASE("http_get sends the target and headers and returns status and body", "[http_get]") {
  ibfx::test::TempDir dir;
  const std::string url = "unix://" + dir.path() + "/s.sock";
  HttpGetResult r;
  {
    ibfx::test::FakeHttpServer server(dir.path() + "/s.sock", 404, "not here");
    r = ibfx::http_get(get_request(url));
    CHECK(server.request().target() == "/a/b");
    CHECK(server.request()["Host"] == "localhost");
    CHECK(server.request()["User-Agent"] == "ibfabric_exporter");
    CHECK(server.request()["Accept"] == "application/json");
    CHECK(server.request()["X-Extra"] == "1");
  }
  CHECK(r.outcome == HttpGetResult::Outcome::kAnswered);
  CHECK(r.where == url);
  CHECK(r.status == 404);
  CHECK(r.body == "not here");
}

TEST_CASE("http_get times out, and names a transport error", "[http_get]") {
  ibfx::test::TempDir dir;
  const std::string path = dir.path() + "/s.sock";
  {
    ibfx::test::FakeHttpServer server(path, 200, "", true);
    const auto before = std::chrono::steady_clock::now();
    const HttpGetResult r = ibfx::http_get(get_request("unix://" + path, 300ms));
    CHECK(r.outcome == HttpGetResult::Outcome::kTimedOut);
    CHECK(std::chrono::steady_clock::now() - before < 1400ms);
  }
  ::unlink(path.c_str());
  const HttpGetResult gone = ibfx::http_get(get_request("unix://" + path));
  CHECK(gone.outcome == HttpGetResult::Outcome::kFailed);
  CHECK(gone.error == "No such file or directory");
  const HttpGetResult refused = ibfx::http_get(get_request("http://127.0.0.1:1"));
  CHECK(refused.outcome == HttpGetResult::Outcome::kFailed);
  CHECK(refused.where == "127.0.0.1:1");
  CHECK(refused.error == "Connection refused");
}
