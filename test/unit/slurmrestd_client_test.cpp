#include "jobs/slurmrestd_client.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <catch2/catch.hpp>
#include <thread>

#include "test/support/temp_dir.h"

namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using namespace std::chrono_literals;

// One-request HTTP server on a unix socket, like slurmrestd's
// `unix:/path` listener: answers `status` and `body`, or nothing at all
// (holds the connection) when `silent`; records the request.
class FakeSlurmrestd {
 public:
  FakeSlurmrestd(const std::string& path, unsigned status, std::string body, bool silent = false)
      : acceptor_(io_, asio::local::stream_protocol::endpoint(path)) {
    thread_ = std::thread([this, status, body = std::move(body), silent] {
      asio::local::stream_protocol::socket socket(io_);
      boost::system::error_code ec;
      acceptor_.accept(socket, ec);
      if (ec) return;
      boost::beast::flat_buffer buf;
      http::read(socket, buf, request_, ec);
      if (silent) {
        std::this_thread::sleep_for(1500ms);
        return;
      }
      http::response<http::string_body> res{static_cast<http::status>(status), 11};
      res.body() = body;
      res.prepare_payload();
      http::write(socket, res, ec);
    });
  }
  ~FakeSlurmrestd() { thread_.join(); }
  const http::request<http::string_body>& request() const { return request_; }

 private:
  asio::io_context io_;
  asio::local::stream_protocol::acceptor acceptor_;
  http::request<http::string_body> request_;
  std::thread thread_;
};

}  // namespace

TEST_CASE("slurmrestd client: GET /slurm/<version>/jobs over a unix socket", "[slurmrestd]") {
  ibfx::test::TempDir dir;
  ibfx::JobsConfig config;
  config.url = "unix://" + dir.path() + "/rest.sock";
  config.user_name = "ibfx";
  ibfx::FetchResult r;
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
              ": HTTP 401 (token or user name refused): \"Authentication failure?\"");
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
