#include "http/http_server.h"

#include "http/gzip_writer.h"

#define ZLIB_CONST
#include <crypt.h>
#include <sys/resource.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using ibfx::HttpRequest;
using ibfx::HttpResponse;
using ibfx::HttpServer;
using ibfx::HttpServerLimits;
using Response = http::response<http::string_body>;
using namespace std::chrono_literals;

// Every client operation has a deadline so a server bug fails the test
// instead of hanging it.
constexpr auto kClientTimeout = 5s;

std::string big_body() {
  std::string body;
  for (int i = 0; body.size() < 8192; ++i) {
    body += "ibfx_port_xmit_data_total{guid=\"0x0002c90300a1b2c3\",port=\"" + std::to_string(i) +
            "\"} " + std::to_string(i * 7919) + "\n";
  }
  return body;
}

HttpResponse test_handler(const HttpRequest& req) {
  if (req.path == "/") return {200, "text/plain; charset=utf-8", "hello\n"};
  if (req.path == "/big") return {200, "text/plain; version=0.0.4", big_body()};
  if (req.path == "/small") return {200, "text/plain", "small body"};
  if (req.path == "/raw") return {200, "application/octet-stream", big_body(), false};
  if (req.path == "/echo") {
    return {200, "text/plain",
            req.method + "|" + req.target + "|" + req.path + "|" +
                (req.accepts_gzip ? "gzip" : "identity")};
  }
  if (req.path == "/pre") {
    HttpResponse res{200, "text/plain", req.accepts_gzip ? ibfx::gzip_compress("tiny") : "tiny"};
    res.precompressed_gzip = req.accepts_gzip;
    return res;
  }
  if (req.path == "/stream" || req.path == "/stream-broken") {
    // big_body() in 1000-byte pieces; the broken one throws after two pieces.
    HttpResponse res;
    const bool broken = req.path == "/stream-broken";
    res.stream = HttpResponse::BodyStream{
        big_body().size(), [offset = std::size_t{0}, broken](std::string& piece) mutable {
          if (broken && offset >= 2000) throw std::runtime_error("stream broke (expected)");
          const std::string all = big_body();
          piece = all.substr(offset, 1000);
          offset += piece.size();
          return offset < all.size();
        }};
    return res;
  }
  if (req.path == "/huge") {
    // 1 GiB that a client which does not read keeps in the write phase.
    HttpResponse res;
    res.stream = HttpResponse::BodyStream{std::uint64_t{1} << 30,
                                          [sent = std::uint64_t{0}](std::string& piece) mutable {
                                            piece.assign(64 * 1024, 'x');
                                            sent += piece.size();
                                            return sent < (std::uint64_t{1} << 30);
                                          }};
    return res;
  }
  if (req.path == "/boom") throw std::runtime_error("handler exploded (expected by the test)");
  return {404, "text/plain", "not found\n"};
}

// Throws rather than using REQUIRE: it also runs on client threads, where
// Catch2 assertions are not allowed.
std::string gunzip(const std::string& data) {
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 16) != Z_OK) throw std::runtime_error("inflateInit2 failed");
  zs.next_in = reinterpret_cast<const Bytef*>(data.data());
  zs.avail_in = static_cast<uInt>(data.size());
  std::string out;
  std::array<char, 16384> chunk{};
  int rc = Z_OK;
  while (rc == Z_OK) {
    zs.next_out = reinterpret_cast<Bytef*>(chunk.data());
    zs.avail_out = static_cast<uInt>(chunk.size());
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(chunk.data(), chunk.size() - zs.avail_out);
  }
  inflateEnd(&zs);
  if (rc != Z_STREAM_END) throw std::runtime_error("gunzip: corrupt data");
  return out;
}

// Runs the server's io_context on one background thread, as the daemon does.
class ServerFixture {
 public:
  explicit ServerFixture(ibfx::HttpHandler handler = test_handler, HttpServerLimits limits = {},
                         const std::string& address = "127.0.0.1:0")
      : server_(io_, address, std::move(handler), limits), thread_([this] {
          io_.run();
          finished_ = true;
        }) {}
  ~ServerFixture() { shutdown(); }
  ServerFixture(const ServerFixture&) = delete;
  ServerFixture& operator=(const ServerFixture&) = delete;

  // Stops the server and reports whether io_context::run() returned on its own.
  bool shutdown() {
    if (!thread_.joinable()) return true;
    server_.stop();
    auto deadline = std::chrono::steady_clock::now() + kClientTimeout;
    while (!finished_ && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(5ms);
    bool clean = finished_;
    if (!clean) io_.stop();
    thread_.join();
    return clean;
  }

  HttpServer& server() { return server_; }
  std::uint16_t port() const { return server_.port(); }

  // open_connections() drops asynchronously after a client goes away.
  bool wait_for_connections(std::size_t expected) {
    auto deadline = std::chrono::steady_clock::now() + kClientTimeout;
    while (server_.open_connections() != expected) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(5ms);
    }
    return true;
  }

 private:
  asio::io_context io_;
  HttpServer server_;
  std::atomic<bool> finished_{false};
  std::thread thread_;
};

// A blocking-style client built on its own io_context so every operation can
// carry a timeout (plain synchronous Asio reads ignore SO_RCVTIMEO).
class Client {
 public:
  // `source`: the local address to connect from (any 127/8 address works on
  // Linux loopback), to act as several clients.
  explicit Client(std::uint16_t port,
                  const asio::ip::address& address = asio::ip::make_address("127.0.0.1"),
                  std::optional<asio::ip::address> source = std::nullopt) {
    error_code ec;
    if (source) {
      stream_.socket().open(tcp::v4());
      stream_.socket().bind(tcp::endpoint(*source, 0));
    }
    stream_.expires_after(kClientTimeout);
    stream_.async_connect(tcp::endpoint(address, port), [&](error_code e) { ec = e; });
    run();
    if (ec) throw std::runtime_error("connect failed: " + ec.message());
  }

  void send(std::string_view raw) {
    error_code ec;
    stream_.expires_after(kClientTimeout);
    asio::async_write(stream_, asio::buffer(raw.data(), raw.size()),
                      [&](error_code e, std::size_t) { ec = e; });
    run();
    if (ec) throw std::runtime_error("write failed: " + ec.message());
  }

  // One response, or nullopt when the connection ended instead (see error()).
  std::optional<Response> read_response(bool head_request = false) {
    http::response_parser<http::string_body> parser;
    parser.body_limit(std::numeric_limits<std::uint64_t>::max());
    parser.skip(head_request);
    error_code ec;
    stream_.expires_after(kClientTimeout);
    http::async_read(stream_, buffer_, parser, [&](error_code e, std::size_t) { ec = e; });
    run();
    error_ = ec;
    if (ec) return std::nullopt;
    return parser.release();
  }

  std::optional<Response> request(std::string_view method, std::string_view target,
                                  std::string_view extra_headers = "") {
    send(std::string(method) + " " + std::string(target) + " HTTP/1.1\r\nHost: test\r\n" +
         std::string(extra_headers) + "\r\n");
    return read_response(method == "HEAD");
  }

  std::optional<Response> get(std::string_view target, std::string_view extra_headers = "") {
    return request("GET", target, extra_headers);
  }

  // True when the server closes the connection (FIN or RST) within `timeout`
  // without sending anything else.
  bool closed_by_server(std::chrono::milliseconds timeout) {
    if (buffer_.size() > 0) return false;
    std::array<char, 256> scratch{};
    error_code ec;
    std::size_t n = 0;
    stream_.expires_after(timeout);
    stream_.async_read_some(asio::buffer(scratch), [&](error_code e, std::size_t bytes) {
      ec = e;
      n = bytes;
    });
    run();
    return n == 0 && (ec == asio::error::eof || ec == asio::error::connection_reset);
  }

  error_code error() const { return error_; }

 private:
  void run() {
    io_.restart();
    io_.run();
  }

  asio::io_context io_;
  beast::tcp_stream stream_{io_};
  beast::flat_buffer buffer_;
  error_code error_;
};

std::string header(const Response& res, http::field field) {
  auto it = res.find(field);
  return it == res.end() ? std::string("<absent>") : std::string(it->value());
}

bool ipv6_loopback_available() {
  try {
    asio::io_context io;
    tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("::1"), 0));
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

TEST_CASE("gzip_compress produces RFC 1952 data that zlib inflates back", "[http]") {
  for (const std::string& input : {std::string(), std::string("a"), big_body(),
                                   std::string(3 * 1024 * 1024, 'x') + big_body()}) {
    std::string compressed = ibfx::gzip_compress(input);
    REQUIRE(compressed.size() >= 18);  // gzip header + trailer
    CHECK(static_cast<unsigned char>(compressed[0]) == 0x1f);
    CHECK(static_cast<unsigned char>(compressed[1]) == 0x8b);
    CHECK(gunzip(compressed) == input);
  }
  CHECK(ibfx::gzip_compress(big_body()).size() < big_body().size() / 2);
}

TEST_CASE("HttpServer serves handler responses", "[http]") {
  ServerFixture fx;
  Client client(fx.port());

  auto ok = client.get("/");
  REQUIRE(ok);
  CHECK(ok->result_int() == 200);
  CHECK(ok->body() == "hello\n");
  CHECK(header(*ok, http::field::content_type) == "text/plain; charset=utf-8");
  CHECK(header(*ok, http::field::content_length) == "6");

  auto missing = client.get("/nope");
  REQUIRE(missing);
  CHECK(missing->result_int() == 404);
  CHECK(missing->body() == "not found\n");

  auto echo = client.get("/echo?a=1&b=2");
  REQUIRE(echo);
  CHECK(echo->body() == "GET|/echo?a=1&b=2|/echo|identity");
}

TEST_CASE("HttpServer answers other methods with 405", "[http]") {
  ServerFixture fx;

  SECTION("POST without a body keeps the connection usable") {
    Client client(fx.port());
    auto res = client.request("POST", "/");
    REQUIRE(res);
    CHECK(res->result_int() == 405);
    CHECK(header(*res, http::field::allow) == "GET, HEAD");
    auto next = client.get("/");
    REQUIRE(next);
    CHECK(next->result_int() == 200);
  }
  SECTION("PUT with a body gets 405 and the connection is closed") {
    Client client(fx.port());
    client.send("PUT /x HTTP/1.1\r\nHost: test\r\nContent-Length: 5\r\n\r\nhello");
    auto res = client.read_response();
    REQUIRE(res);
    CHECK(res->result_int() == 405);
    CHECK(header(*res, http::field::allow) == "GET, HEAD");
    CHECK_FALSE(res->keep_alive());
    CHECK(client.closed_by_server(3000ms));
  }
  SECTION("DELETE and unknown methods") {
    Client client(fx.port());
    auto del = client.request("DELETE", "/");
    REQUIRE(del);
    CHECK(del->result_int() == 405);
    auto odd = client.request("FROB", "/");
    REQUIRE(odd);
    CHECK(odd->result_int() == 405);
  }
}

TEST_CASE("HttpServer HEAD sends headers and Content-Length but no body", "[http]") {
  ServerFixture fx;
  Client client(fx.port());
  const std::string body = big_body();

  auto head = client.request("HEAD", "/big");
  REQUIRE(head);
  CHECK(head->result_int() == 200);
  CHECK(header(*head, http::field::content_length) == std::to_string(body.size()));
  CHECK(head->body().empty());

  // If the server had sent a body, it would be parsed as this response.
  auto get = client.get("/big");
  REQUIRE(get);
  CHECK(get->result_int() == 200);
  CHECK(get->body() == body);

  auto head_gzip = client.request("HEAD", "/big", "Accept-Encoding: gzip\r\n");
  REQUIRE(head_gzip);
  CHECK(header(*head_gzip, http::field::content_encoding) == "gzip");
  CHECK(header(*head_gzip, http::field::content_length) ==
        std::to_string(ibfx::gzip_compress(body).size()));
  CHECK(head_gzip->body().empty());
  auto after = client.get("/small");
  REQUIRE(after);
  CHECK(after->body() == "small body");
}

TEST_CASE("HttpServer negotiates gzip", "[http]") {
  HttpServerLimits limits;
  limits.gzip_min_bytes = 1024;
  ServerFixture fx(test_handler, limits);
  Client client(fx.port());
  const std::string body = big_body();

  SECTION("gzip when asked, large enough and compressible") {
    auto res = client.get("/big", "Accept-Encoding: deflate, gzip;q=0.8\r\n");
    REQUIRE(res);
    CHECK(res->result_int() == 200);
    CHECK(header(*res, http::field::content_encoding) == "gzip");
    CHECK(header(*res, http::field::vary) == "Accept-Encoding");
    CHECK(header(*res, http::field::content_type) == "text/plain; version=0.0.4");
    CHECK(res->body().size() < body.size());
    CHECK(gunzip(res->body()) == body);
  }
  SECTION("no gzip when not asked") {
    auto res = client.get("/big");
    REQUIRE(res);
    CHECK(header(*res, http::field::content_encoding) == "<absent>");
    CHECK(header(*res, http::field::vary) == "Accept-Encoding");
    CHECK(res->body() == body);
  }
  SECTION("no gzip when refused with q=0") {
    auto res = client.get("/big", "Accept-Encoding: gzip;q=0, identity\r\n");
    REQUIRE(res);
    CHECK(header(*res, http::field::content_encoding) == "<absent>");
    CHECK(res->body() == body);
  }
  SECTION("no gzip below gzip_min_bytes") {
    auto res = client.get("/small", "Accept-Encoding: gzip\r\n");
    REQUIRE(res);
    CHECK(header(*res, http::field::content_encoding) == "<absent>");
    CHECK(res->body() == "small body");
  }
  SECTION("no gzip when the handler marks the body incompressible") {
    auto res = client.get("/raw", "Accept-Encoding: gzip\r\n");
    REQUIRE(res);
    CHECK(header(*res, http::field::content_encoding) == "<absent>");
    CHECK(res->body() == body);
  }
  SECTION("a precompressed body is sent as is, whatever its size") {
    auto res = client.get("/pre", "Accept-Encoding: gzip\r\n");
    REQUIRE(res);
    CHECK(header(*res, http::field::content_encoding) == "gzip");
    CHECK(header(*res, http::field::vary) == "Accept-Encoding");
    CHECK(gunzip(res->body()) == "tiny");
    auto head = client.request("HEAD", "/pre", "Accept-Encoding: gzip\r\n");
    REQUIRE(head);
    CHECK(header(*head, http::field::content_encoding) == "gzip");
    CHECK(header(*head, http::field::content_length) ==
          std::to_string(ibfx::gzip_compress("tiny").size()));
    auto plain = client.get("/pre");
    REQUIRE(plain);
    CHECK(header(*plain, http::field::content_encoding) == "<absent>");
    CHECK(plain->body() == "tiny");
  }
  SECTION("the handler sees the negotiated result") {
    auto res = client.get("/echo", "Accept-Encoding: br\r\nAccept-Encoding: GZIP\r\n");
    REQUIRE(res);
    CHECK(res->body() == "GET|/echo|/echo|gzip");
  }
}

TEST_CASE("HttpServer keeps connections alive", "[http]") {
  ServerFixture fx;

  SECTION("two requests on one connection") {
    Client client(fx.port());
    auto first = client.get("/");
    REQUIRE(first);
    CHECK(first->keep_alive());
    auto second = client.get("/small");
    REQUIRE(second);
    CHECK(second->body() == "small body");
    CHECK(fx.server().open_connections() == 1);
  }
  SECTION("pipelined requests are answered in order") {
    Client client(fx.port());
    client.send(
        "GET /echo?n=1 HTTP/1.1\r\nHost: t\r\n\r\n"
        "GET /echo?n=2 HTTP/1.1\r\nHost: t\r\n\r\n");
    auto first = client.read_response();
    auto second = client.read_response();
    REQUIRE(first);
    REQUIRE(second);
    CHECK(first->body() == "GET|/echo?n=1|/echo|identity");
    CHECK(second->body() == "GET|/echo?n=2|/echo|identity");
  }
  SECTION("Connection: close and HTTP/1.0 end the connection") {
    Client client(fx.port());
    auto res = client.get("/", "Connection: close\r\n");
    REQUIRE(res);
    CHECK(res->body() == "hello\n");
    CHECK(client.closed_by_server(3000ms));

    Client old(fx.port());
    old.send("GET / HTTP/1.0\r\n\r\n");
    auto res10 = old.read_response();
    REQUIRE(res10);
    CHECK(res10->version() == 10);
    CHECK(res10->body() == "hello\n");
    CHECK(old.closed_by_server(3000ms));
  }
}

TEST_CASE("HttpServer rejects bad requests", "[http]") {
  HttpServerLimits limits;
  limits.max_header_bytes = 8 * 1024;
  ServerFixture fx(test_handler, limits);

  SECTION("malformed request line -> 400 and close") {
    Client client(fx.port());
    client.send("THIS IS NOT HTTP\r\n\r\n");
    auto res = client.read_response();
    REQUIRE(res);
    CHECK(res->result_int() == 400);
    CHECK(client.closed_by_server(3000ms));
  }
  SECTION("malformed header field -> 400 and close") {
    Client client(fx.port());
    client.send("GET / HTTP/1.1\r\nHost: test\r\nno colon here\r\n\r\n");
    auto res = client.read_response();
    REQUIRE(res);
    CHECK(res->result_int() == 400);
    CHECK(client.closed_by_server(3000ms));
  }
  SECTION("oversized header block -> 431 and close") {
    Client client(fx.port());
    client.send("GET / HTTP/1.1\r\nHost: test\r\nX-Padding: " + std::string(16 * 1024, 'p') +
                "\r\n\r\n");
    auto res = client.read_response();
    REQUIRE(res);
    CHECK(res->result_int() == 431);
    CHECK_FALSE(res->keep_alive());
    CHECK(client.closed_by_server(3000ms));
  }
  SECTION("a request body over max_body_bytes -> 413 and close") {
    Client client(fx.port());
    client.send("GET / HTTP/1.1\r\nHost: test\r\nContent-Length: 10\r\n\r\n0123456789");
    auto res = client.read_response();
    REQUIRE(res);
    CHECK(res->result_int() == 413);
    CHECK(client.closed_by_server(3000ms));
  }
  SECTION("a chunked request body over max_body_bytes -> 413") {
    Client client(fx.port());
    client.send(
        "GET / HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: "
        "chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
    auto res = client.read_response();
    REQUIRE(res);
    CHECK(res->result_int() == 413);
  }
  SECTION("the server keeps serving other clients") {
    Client bad(fx.port());
    bad.send("\x01\x02garbage\r\n\r\n");
    auto res = bad.read_response();
    REQUIRE(res);
    CHECK(res->result_int() == 400);
    Client good(fx.port());
    auto ok = good.get("/");
    REQUIRE(ok);
    CHECK(ok->result_int() == 200);
  }
}

TEST_CASE("HttpServer drops idle and slow clients", "[http]") {
  HttpServerLimits limits;
  limits.idle_timeout = 1s;
  limits.header_timeout = 1s;
  ServerFixture fx(test_handler, limits);

  SECTION("half a request") {
    Client client(fx.port());
    client.send("GET /big HTTP/1.1\r\nHost: te");
    auto start = std::chrono::steady_clock::now();
    CHECK(client.closed_by_server(4000ms));
    auto elapsed = std::chrono::steady_clock::now() - start;
    CHECK(elapsed >= 500ms);
    CHECK(elapsed < 3500ms);
  }
  SECTION("an idle keep-alive connection after a response") {
    Client client(fx.port());
    auto res = client.get("/");
    REQUIRE(res);
    CHECK(res->result_int() == 200);
    CHECK(client.closed_by_server(4000ms));
  }
  SECTION("a connection that never sends anything") {
    Client client(fx.port());
    CHECK(client.closed_by_server(4000ms));
  }
  CHECK(fx.wait_for_connections(0));
}

TEST_CASE("HttpServer gives request headers a deadline of their own", "[http]") {
  HttpServerLimits limits;
  limits.header_timeout = 300ms;
  limits.idle_timeout = 3s;
  ServerFixture fx(test_handler, limits);

  SECTION("a connection that never sends anything") {
    Client client(fx.port());
    const auto start = std::chrono::steady_clock::now();
    CHECK(client.closed_by_server(2500ms));
    CHECK(std::chrono::steady_clock::now() - start < 1500ms);
  }
  SECTION("headers trickled a byte at a time cannot extend it") {
    Client client(fx.port());
    const auto start = std::chrono::steady_clock::now();
    const std::string request = "GET / HTTP/1.1\r\nHost: test\r\n";
    bool closed = false;
    for (char c : request) {
      try {
        client.send(std::string(1, c));
      } catch (const std::runtime_error&) {
        closed = true;
        break;
      }
      std::this_thread::sleep_for(50ms);
    }
    CHECK((closed || client.closed_by_server(2500ms)));
    CHECK(std::chrono::steady_clock::now() - start < 2000ms);
  }
  SECTION("a kept-alive connection waits the idle timeout, then gets a fresh header deadline") {
    Client client(fx.port());
    REQUIRE(client.get("/"));
    // Longer than the header timeout: idle between requests is not header time.
    std::this_thread::sleep_for(800ms);
    auto res = client.get("/small");
    REQUIRE(res);
    CHECK(res->body() == "small body");
    client.send("GET /small HTTP/1.1\r\n");
    const auto start = std::chrono::steady_clock::now();
    CHECK(client.closed_by_server(2500ms));
    CHECK(std::chrono::steady_clock::now() - start < 1500ms);
  }
  SECTION("a request sent in pieces within the deadline is answered") {
    Client client(fx.port());
    client.send("GET /small HTTP/1.1\r\n");
    std::this_thread::sleep_for(100ms);
    client.send("Host: test\r\n\r\n");
    auto res = client.read_response();
    REQUIRE(res);
    CHECK(res->body() == "small body");
  }
  CHECK(fx.wait_for_connections(0));
}

TEST_CASE("HttpServer at its connection cap closes the oldest idle or unfinished connection",
          "[http]") {
  HttpServerLimits limits;
  limits.max_connections = 3;
  ServerFixture fx(test_handler, limits);

  Client idle(fx.port());
  REQUIRE(idle.get("/"));  // then idle: the oldest evictable one
  Client half(fx.port());
  half.send("GET / HTTP/1.1\r\nHo");
  Client silent(fx.port());
  REQUIRE(fx.wait_for_connections(3));

  Client first(fx.port());
  auto res = first.get("/small");
  REQUIRE(res);
  CHECK(res->body() == "small body");
  CHECK(idle.closed_by_server(2000ms));

  Client second(fx.port());
  res = second.get("/small");
  REQUIRE(res);
  CHECK(res->result_int() == 200);
  CHECK(half.closed_by_server(2000ms));
  CHECK(fx.server().evicted_connections() == 2);
  CHECK(fx.server().refused_connections() == 0);

  // The kept-alive ones that just answered are still there and usable.
  res = first.get("/small");
  REQUIRE(res);
  CHECK(res->body() == "small body");
  CHECK(fx.wait_for_connections(3));
}

TEST_CASE("HttpServer refuses with 503 only when every connection is busy", "[http]") {
  HttpServerLimits limits;
  limits.max_connections = 2;
  ServerFixture fx(test_handler, limits);

  // Clients that ask for a huge body and do not read it keep their
  // connections in the write phase: busy, never evicted.
  Client a(fx.port());
  Client b(fx.port());
  a.send("GET /huge HTTP/1.1\r\nHost: test\r\n\r\n");
  b.send("GET /huge HTTP/1.1\r\nHost: test\r\n\r\n");
  std::this_thread::sleep_for(300ms);  // both responses under way

  {
    Client c(fx.port());
    auto res = c.read_response();  // sent nothing, so the close is a clean FIN
    REQUIRE(res);
    CHECK(res->result_int() == 503);
    CHECK(header(*res, http::field::retry_after) == "1");
  }
  CHECK(fx.server().refused_connections() == 1);
  CHECK(fx.server().evicted_connections() == 0);
}

TEST_CASE("HttpServer limits the connections of one client address", "[http]") {
  HttpServerLimits limits;
  limits.max_connections_per_client = 2;
  ServerFixture fx(test_handler, limits);
  const auto local = asio::ip::make_address("127.0.0.1");
  const auto one = asio::ip::make_address("127.0.0.2");
  const auto other = asio::ip::make_address("127.0.0.3");

  Client a(fx.port(), local, one);
  Client b(fx.port(), local, one);
  Client elsewhere(fx.port(), local, other);
  REQUIRE(a.get("/"));
  REQUIRE(b.get("/"));
  REQUIRE(elsewhere.get("/"));

  // The third connection from 127.0.0.2 pushes out its own oldest, not the
  // other client's.
  Client c(fx.port(), local, one);
  auto res = c.get("/small");
  REQUIRE(res);
  CHECK(res->result_int() == 200);
  CHECK(a.closed_by_server(2000ms));
  res = elsewhere.get("/small");
  REQUIRE(res);
  CHECK(res->result_int() == 200);
  res = b.get("/small");
  REQUIRE(res);
  CHECK(res->result_int() == 200);
  CHECK(fx.server().evicted_connections() == 1);
}

TEST_CASE(
    "HttpServer: a client without valid credentials holds a slot no longer than the header "
    "timeout",
    "[http]") {
  // bcrypt at the minimum cost (4), so the test spends no time hashing.
  std::array<char, CRYPT_GENSALT_OUTPUT_SIZE> salt{};
  REQUIRE(crypt_gensalt_rn("$2y$", 4, nullptr, 0, salt.data(), static_cast<int>(salt.size())));
  crypt_data data{};
  const char* hash = crypt_rn("secret", salt.data(), &data, sizeof(data));
  REQUIRE(hash != nullptr);
  ibfx::WebConfig web;
  web.basic_auth_users["prometheus"] = hash;
  HttpServerLimits limits;
  limits.header_timeout = 600ms;
  limits.idle_timeout = 5s;
  asio::io_context io;
  HttpServer server(io, "127.0.0.1:0", test_handler, limits, web);
  std::thread thread([&io] { io.run(); });

  // Requests without credentials, each answered 401, do not extend it.
  Client anonymous(server.port());
  const auto start = std::chrono::steady_clock::now();
  auto res = anonymous.get("/small");
  REQUIRE(res);
  CHECK(res->result_int() == 401);
  std::this_thread::sleep_for(250ms);
  res = anonymous.get("/small");
  REQUIRE(res);
  CHECK(res->result_int() == 401);
  CHECK(anonymous.closed_by_server(2500ms));
  const auto held = std::chrono::steady_clock::now() - start;
  CHECK(held >= 400ms);
  CHECK(held < 1500ms);

  // Once it has authenticated, a connection gets the idle timeout.
  Client scraper(server.port());
  // "prometheus:secret"
  res = scraper.get("/small", "Authorization: Basic cHJvbWV0aGV1czpzZWNyZXQ=\r\n");
  REQUIRE(res);
  CHECK(res->result_int() == 200);
  std::this_thread::sleep_for(1200ms);  // twice the header timeout
  res = scraper.get("/small", "Authorization: Basic cHJvbWV0aGV1czpzZWNyZXQ=\r\n");
  REQUIRE(res);
  CHECK(res->body() == "small body");

  server.stop();
  thread.join();
}

TEST_CASE(
    "HttpServer: a TLS client that never finishes its handshake is closed at the header "
    "timeout",
    "[http]") {
  char dir_template[] = "/tmp/ibfx-http-tls-XXXXXX";
  REQUIRE(::mkdtemp(dir_template) != nullptr);
  const std::string dir = dir_template;
  const std::string command =
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 "
      "-subj /CN=localhost -keyout " +
      dir + "/tls.key -out " + dir + "/tls.crt >/dev/null 2>&1";
  REQUIRE(std::system(command.c_str()) == 0);
  ibfx::WebConfig web;
  web.tls.emplace();
  web.tls->cert_file = dir + "/tls.crt";
  web.tls->key_file = dir + "/tls.key";
  HttpServerLimits limits;
  limits.header_timeout = 500ms;
  limits.idle_timeout = 5s;
  {
    asio::io_context io;
    HttpServer server(io, "127.0.0.1:0", test_handler, limits, web);
    std::thread thread([&io] { io.run(); });

    Client silent(server.port());
    Client trickling(server.port());
    // The start of a TLS record header (handshake, TLS 1.0, 512 bytes) that
    // never completes.
    trickling.send(std::string("\x16\x03\x01\x02", 4));
    const auto start = std::chrono::steady_clock::now();
    CHECK(silent.closed_by_server(2500ms));
    CHECK(trickling.closed_by_server(2500ms));
    CHECK(std::chrono::steady_clock::now() - start < 1500ms);

    server.stop();
    thread.join();
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE(
    "HttpServer holds 1,000 idle and 200 slow-header connections and still serves 50 "
    "concurrent scrapes",
    "[http][http_flood]") {
  rlimit nofile{};
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &nofile) == 0);
  nofile.rlim_cur = nofile.rlim_max;  // both ends of 1,250 connections live here
  REQUIRE(::setrlimit(RLIMIT_NOFILE, &nofile) == 0);
  REQUIRE(nofile.rlim_cur >= 8192);  // a test Client holds 4 descriptors
  ServerFixture fx;                  // default limits: the cap follows RLIMIT_NOFILE
  REQUIRE(fx.server().max_connections() > 1300);

  std::vector<std::unique_ptr<Client>> idle;
  std::vector<std::unique_ptr<Client>> slow;
  for (int i = 0; i < 1000; ++i) idle.push_back(std::make_unique<Client>(fx.port()));
  for (int i = 0; i < 200; ++i) {
    slow.push_back(std::make_unique<Client>(fx.port()));
    slow.back()->send("GET /big HTTP/1.1\r\nHost: te");
  }
  REQUIRE(fx.wait_for_connections(1200));

  std::atomic<int> good{0};
  std::atomic<long> slowest_ms{0};
  std::vector<std::thread> scrapers;
  const std::string big = big_body();
  for (int t = 0; t < 50; ++t) {
    scrapers.emplace_back([&] {
      try {
        const auto start = std::chrono::steady_clock::now();
        Client client(fx.port());
        auto res = client.get("/big");
        const long ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::steady_clock::now() - start)
                            .count();
        long seen = slowest_ms.load();
        while (ms > seen && !slowest_ms.compare_exchange_weak(seen, ms)) {
        }
        if (res && res->result_int() == 200 && res->body() == big) ++good;
      } catch (const std::exception&) {
        // counted as a failure below
      }
    });
  }
  for (auto& t : scrapers) t.join();
  CHECK(good == 50);
  CHECK(slowest_ms < 2000);
  CHECK(fx.server().evicted_connections() == 0);
  CHECK(fx.server().refused_connections() == 0);
  // The flood is still there, untouched: nothing was closed to serve the scrapes.
  CHECK(fx.wait_for_connections(1200));
  std::cout << "flood figures [HttpServer, no cap]: 1200 flood connections held, 50 concurrent "
               "scrapes ok="
            << good << ", slowest " << slowest_ms << " ms\n";

  idle.clear();
  slow.clear();
  CHECK(fx.wait_for_connections(0));
}

TEST_CASE("HttpServer effective_max_connections follows RLIMIT_NOFILE", "[http]") {
  HttpServerLimits limits;
  limits.max_connections = 77;
  CHECK(ibfx::effective_max_connections(limits) == 77);
  limits.max_connections = 0;
  rlimit nofile{};
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &nofile) == 0);
  const std::size_t expected =
      nofile.rlim_cur == RLIM_INFINITY
          ? ibfx::kMaxAutoConnections
          : std::min<std::size_t>(nofile.rlim_cur - ibfx::kReservedDescriptors,
                                  ibfx::kMaxAutoConnections);
  CHECK(ibfx::effective_max_connections(limits) == expected);
}

TEST_CASE("HttpServer turns handler exceptions into 500 and keeps serving", "[http]") {
  ServerFixture fx;
  Client client(fx.port());
  auto boom = client.get("/boom");
  REQUIRE(boom);
  CHECK(boom->result_int() == 500);
  auto ok = client.get("/");
  REQUIRE(ok);
  CHECK(ok->result_int() == 200);
  CHECK(ok->body() == "hello\n");
}

TEST_CASE("HttpServer listen addresses", "[http]") {
  asio::io_context io;

  SECTION("port 0 binds an ephemeral port on all interfaces") {
    ServerFixture fx(test_handler, {}, ":0");
    CHECK(fx.port() != 0);
    Client client(fx.port());  // IPv4 loopback reaches the dual-stack/any socket
    auto res = client.get("/");
    REQUIRE(res);
    CHECK(res->result_int() == 200);
  }
  SECTION("localhost") {
    ServerFixture fx(test_handler, {}, "localhost:0");
    CHECK(fx.port() != 0);
    Client client(fx.port());
    auto res = client.get("/");
    REQUIRE(res);
    CHECK(res->body() == "hello\n");
  }
  SECTION("[::1]") {
    if (!ipv6_loopback_available()) {
      WARN("::1 is not available on this machine; skipping the IPv6 listen test");
      SUCCEED();
      return;
    }
    ServerFixture fx(test_handler, {}, "[::1]:0");
    CHECK(fx.port() != 0);
    Client client(fx.port(), asio::ip::make_address("::1"));
    auto res = client.get("/");
    REQUIRE(res);
    CHECK(res->body() == "hello\n");
  }
  SECTION("a port in use throws") {
    HttpServer first(io, "127.0.0.1:0", test_handler);
    std::string address = "127.0.0.1:" + std::to_string(first.port());
    CHECK_THROWS_WITH(HttpServer(io, address, test_handler),
                      Catch::StartsWith("cannot listen on " + address + ": "));
  }
  SECTION("bad addresses throw") {
    for (const char* bad :
         {"", "9690", "127.0.0.1", "127.0.0.1:", "127.0.0.1:http", "127.0.0.1:65536",
          "127.0.0.1:-1", "[::1:9690", "[::1]9690", "::1:9690", "192.0.2.1:0"}) {
      INFO("address: '" << bad << "'");
      CHECK_THROWS_AS(HttpServer(io, bad, test_handler), std::runtime_error);
      CHECK_THROWS_WITH(HttpServer(io, bad, test_handler), Catch::Contains("cannot listen on"));
    }
  }
}

TEST_CASE("HttpServer::stop closes open connections so run() returns", "[http]") {
  HttpServerLimits limits;
  limits.idle_timeout = 60s;  // stop() must not wait for these
  limits.header_timeout = 60s;
  ServerFixture fx(test_handler, limits);
  Client keep_alive(fx.port());
  REQUIRE(keep_alive.get("/"));
  Client half(fx.port());
  half.send("GET / HTTP/1.1\r\n");
  REQUIRE(fx.wait_for_connections(2));

  auto start = std::chrono::steady_clock::now();
  CHECK(fx.shutdown());
  CHECK(std::chrono::steady_clock::now() - start < 2s);
  CHECK(keep_alive.closed_by_server(2000ms));
  CHECK(half.closed_by_server(2000ms));
  CHECK(fx.server().open_connections() == 0);
  CHECK_THROWS(Client(fx.port()));  // the listener is gone too
}

TEST_CASE("HttpServer answers many concurrent clients correctly", "[http]") {
  HttpServerLimits limits;
  limits.max_connections = 256;  // closed sessions may linger briefly
  std::atomic<int> handled{0};
  ServerFixture fx(
      [&handled](const HttpRequest& req) {
        ++handled;
        return test_handler(req);
      },
      limits);

  constexpr int kThreads = 50;
  constexpr int kRequests = 20;
  std::atomic<int> good{0};
  std::mutex errors_mutex;
  std::vector<std::string> errors;
  std::vector<std::thread> threads;
  const std::string big = big_body();
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        std::optional<Client> client;
        for (int i = 0; i < kRequests; ++i) {
          // Mix fresh connections with keep-alive reuse.
          if (i % 5 == 0) client.emplace(fx.port());
          std::string target = "/echo?t=" + std::to_string(t) + "&i=" + std::to_string(i);
          bool gzip = i % 3 == 0;
          auto res = gzip && i % 2 == 0 ? client->get("/big", "Accept-Encoding: gzip\r\n")
                                        : client->get(target);
          if (!res) throw std::runtime_error("no response: " + client->error().message());
          std::string body = res->body();
          std::string expected = "GET|" + target + "|/echo|identity";
          if (gzip && i % 2 == 0) {
            body = gunzip(body);
            expected = big;
          }
          if (res->result_int() != 200 || body != expected)
            throw std::runtime_error("wrong answer for " + target + ": " + body.substr(0, 80));
          ++good;
        }
      } catch (const std::exception& e) {
        std::lock_guard lock(errors_mutex);
        errors.push_back("thread " + std::to_string(t) + ": " + e.what());
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (const auto& error : errors) UNSCOPED_INFO(error);
  CHECK(errors.empty());
  CHECK(good == kThreads * kRequests);
  CHECK(handled == kThreads * kRequests);
}

TEST_CASE("HttpServer writes a streamed body piece by piece", "[http]") {
  ServerFixture fx;
  Client client(fx.port());
  const std::string body = big_body();

  auto get = client.get("/stream", "Accept-Encoding: gzip\r\n");
  REQUIRE(get);
  CHECK(get->result_int() == 200);
  CHECK(header(*get, http::field::content_length) == std::to_string(body.size()));
  // The server never compresses a stream on its own.
  CHECK(header(*get, http::field::content_encoding) == "<absent>");
  CHECK(get->body() == body);

  // HEAD: the same headers, no body; the connection stays usable.
  auto head = client.request("HEAD", "/stream");
  REQUIRE(head);
  CHECK(header(*head, http::field::content_length) == std::to_string(body.size()));
  CHECK(head->body().empty());
  auto again = client.get("/stream");
  REQUIRE(again);
  CHECK(again->body() == body);
  auto after = client.get("/small");
  REQUIRE(after);
  CHECK(after->body() == "small body");

  // A body source that fails mid-way: the headers are out, so the only honest
  // answer is to close the connection (the client sees a short body), and the
  // server keeps serving others.
  Client broken(fx.port());
  CHECK_FALSE(broken.get("/stream-broken"));
  Client next(fx.port());
  auto ok = next.get("/small");
  REQUIRE(ok);
  CHECK(ok->body() == "small body");
}
