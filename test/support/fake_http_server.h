// A one-request HTTP server for the tests of HTTP clients (http/http_get.h,
// jobs/slurmrestd_client.h).
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <string>
#include <thread>
#include <utility>

namespace ibfx::test {

// One-request HTTP server on a unix socket, like slurmrestd's
// `unix:/path` listener: answers `status` and `body`, or nothing at all
// (holds the connection for 1.5 s) when `silent`; records the request.
class FakeHttpServer {
 public:
  FakeHttpServer(const std::string& path, unsigned status, std::string body, bool silent = false)
      : acceptor_(io_, boost::asio::local::stream_protocol::endpoint(path)) {
    thread_ = std::thread([this, status, body = std::move(body), silent] {
      boost::asio::local::stream_protocol::socket socket(io_);
      boost::system::error_code ec;
      acceptor_.accept(socket, ec);
      if (ec) return;
      boost::beast::flat_buffer buf;
      boost::beast::http::read(socket, buf, request_, ec);
      if (silent) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1500));
        return;
      }
      boost::beast::http::response<boost::beast::http::string_body> res{
          static_cast<boost::beast::http::status>(status), 11};
      res.body() = body;
      res.prepare_payload();
      boost::beast::http::write(socket, res, ec);
    });
  }
  ~FakeHttpServer() { thread_.join(); }
  const boost::beast::http::request<boost::beast::http::string_body>& request() const {
    return request_;
  }

 private:
  boost::asio::io_context io_;
  boost::asio::local::stream_protocol::acceptor acceptor_;
  boost::beast::http::request<boost::beast::http::string_body> request_;
  std::thread thread_;
};

}  // namespace ibfx::test
