#include "jobs/slurmrestd_client.h"

#include <catch2/catch.hpp>

#include "test/support/fake_http_server.h"
#include "test/support/temp_dir.h"

using namespace std::chrono_literals;
namespace http = boost::beast::http;
using FakeSlurmrestd = ibfx::test::FakeHttpServer;

TEST_CASE("slurmrestd client: GET /slurm/<version>/jobs over a unix socket", "[slurmrestd]") {
  ibfx::test::TempDir dir;
  ibfx::JobsConfig config;
  config.url = "unix://" + dir.path() + "/rest.sock";
  config.user_name = "ibfx";
  ibfx::JobListFetch r;
  {
    FakeSlurmrestd server(dir.path() + "/rest.sock", 200, R"({"jobs":[]})");
    r = ibfx::SlurmrestdClient(config).fetch("tok.en");
    CHECK(server.request().target() == "/slurm/v0.0.38/jobs");
    CHECK(server.request().method() == http::verb::get);
    CHECK(server.request()["X-SLURM-USER-NAME"] == "ibfx");
    CHECK(server.request()["X-SLURM-USER-TOKEN"] == "tok.en");
  }
  INFO(r.error);
  CHECK(r.ok());
  CHECK(r.body == R"({"jobs":[]})");
}

TEST_CASE("slurmrestd client: refusals, errors and silence are clear errors", "[slurmrestd]") {
  ibfx::test::TempDir dir;
  const std::string sock = dir.path() + "/rest.sock";
  ibfx::JobsConfig config;
  config.url = "unix://" + sock;
  config.timeout = 500ms;
  {
    FakeSlurmrestd server(sock, 401, "Authentication failure\n");
    CHECK(ibfx::SlurmrestdClient(config).fetch("").error ==
          "slurmrestd " + config.url +
              ": HTTP 401 (token or user name refused): \"Authentication failure\\x0a\"");
  }
  ::unlink(sock.c_str());
  {
    FakeSlurmrestd server(sock, 500, "");
    CHECK(ibfx::SlurmrestdClient(config).fetch("").error ==
          "slurmrestd " + config.url + ": HTTP 500");
  }
  ::unlink(sock.c_str());
  {
    FakeSlurmrestd server(sock, 200, "", true);
    const auto before = std::chrono::steady_clock::now();
    CHECK(ibfx::SlurmrestdClient(config).fetch("").error ==
          "slurmrestd " + config.url + ": no answer within 500ms");
    CHECK(std::chrono::steady_clock::now() - before < 1400ms);
  }
  ::unlink(sock.c_str());
  CHECK(ibfx::SlurmrestdClient(config).fetch("").error ==
        "slurmrestd " + config.url + ": No such file or directory");
  config.url = "http://127.0.0.1:1";
  CHECK(ibfx::SlurmrestdClient(config).fetch("").error ==
        "slurmrestd 127.0.0.1:1: Connection refused");
}
