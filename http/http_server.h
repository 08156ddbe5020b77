// A small HTTP/1.1 server on Boost.Beast for /metrics and friends. It never
// blocks on the fabric: handlers only read prepared data.
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "http/web_config.h"

namespace ibfx {

struct HttpRequest {
  std::string method;  // "GET", "HEAD", ...
  std::string target;  // path with query, e.g. "/metrics?x=1"
  std::string path;    // path only
  bool accepts_gzip = false;
};

struct HttpResponse {
  HttpResponse() = default;
  HttpResponse(int code, std::string type, std::string text, bool may_compress = true)
      : status(code),
        content_type(std::move(type)),
        body(std::move(text)),
        compressible(may_compress) {}

  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  // When false the server will not gzip the body even if the client asks.
  bool compressible = true;
  // The body is already gzip-compressed (the handler only sets this when the
  // request accepts gzip): send it with Content-Encoding: gzip as is.
  bool precompressed_gzip = false;

  // A large body produced piece by piece while it is written (instead of
  // `body`), so a big response costs each client one piece of memory, not a
  // copy: `size` bytes in all (the Content-Length); each call of `next`
  // replaces `piece` with the next bytes and returns false with the last
  // ones. Never compressed by the server (set precompressed_gzip if it is
  // gzip). `next` runs on the I/O thread; if it throws, the connection is
  // closed (the headers are out already).
  struct BodyStream {
    std::uint64_t size = 0;
    std::function<bool(std::string& piece)> next;
  };
  std::optional<BodyStream> stream;
  // Extra response headers of this endpoint (after the web config's own):
  // the status page's Content-Security-Policy, X-Content-Type-Options.
  std::vector<std::pair<std::string, std::string>> headers;
};

// Called for GET and HEAD only; it picks the status per path (404 for unknown
// ones) and may throw (the client gets 500). The server itself handles other
// methods (405), oversized or malformed requests (400/413/431), idle clients
// and the HEAD body. It runs on the io_context thread, so it must not block.
using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

// How much a client may hold, and for how long. The defaults follow what
// robust servers do against slowloris-style floods (Go's ReadHeaderTimeout
// and IdleTimeout, nginx's client_header_timeout and keepalive_timeout):
// a connection costs a descriptor and a few KiB, so the connection cap is
// set by descriptors, and a full server makes room by closing the oldest
// connection that is idle or still sending its headers, never by turning
// a newcomer (a scrape) away.
struct HttpServerLimits {
  // 0: as many as the process may open, RLIMIT_NOFILE minus
  // kReservedDescriptors for the rest of the daemon (at most
  // kMaxAutoConnections). Only busy connections (reading a body, running the
  // handler, writing a response) are never closed to make room; when every
  // slot is busy the newcomer gets 503.
  std::size_t max_connections = 0;
  // Connections one client address may hold (0: no limit); at the limit its
  // own oldest idle or unfinished-header connection is closed.
  std::size_t max_connections_per_client = 0;
  std::size_t max_header_bytes = std::size_t{8} * 1024;
  std::size_t max_body_bytes = 0;  // GET/HEAD carry no body
  // Request line and headers (and, on a new connection, the TLS handshake)
  // must arrive within this, counted from the accept or, on a kept-alive
  // connection, from the first byte of the next request. A connection that has
  // not yet passed basic auth never holds a slot longer than this.
  std::chrono::milliseconds header_timeout{std::chrono::seconds(10)};
  // A kept-alive connection waits this long for the next request; also the
  // longest a response write may stall (a body may take as long as it needs
  // while the client keeps reading).
  std::chrono::milliseconds idle_timeout{std::chrono::seconds(30)};
  std::size_t gzip_min_bytes = 1024;
};

// Descriptors left to the rest of the daemon (MAD worker pipes, config and
// TLS files, the systemd socket) when max_connections is automatic.
inline constexpr std::size_t kReservedDescriptors = 128;
// Caps the automatic connection limit so memory stays bounded where the
// descriptor limit is in the millions: a connection costs about 5 KiB, a
// handshaking TLS one about 100 KiB (OpenSSL's and Asio's record buffers), so
// 16384 of them at most about 1.6 GiB. Eviction keeps scrapes going at the
// cap, so a larger one would only let a flood take more memory.
inline constexpr std::size_t kMaxAutoConnections = 16384;
// The connection cap HttpServer uses for `limits` under the process's
// current soft RLIMIT_NOFILE.
std::size_t effective_max_connections(const HttpServerLimits& limits);

// Threading: every socket operation runs on the caller's io_context (one
// strand per connection, so running it on several threads is also safe). The
// server never creates threads. stop() may be called from any thread; the
// destructor closes everything synchronously, so destroy the server from the
// io_context's thread or while no thread is running the io_context.
class HttpServer {
 public:
  // listen_address: "host:port", ":port" (all interfaces, IPv6 dual-stack when
  // available), "[::1]:port"; port 0 picks an ephemeral port.
  // Throws std::runtime_error ("cannot listen on X: reason") if it cannot bind.
  //
  // web: TLS, basic auth and extra headers from --web.config.file (the default
  // is plain HTTP without auth). Throws ConfigError when its certificate, key or
  // CA file cannot be loaded.
  HttpServer(boost::asio::io_context& io, const std::string& listen_address, HttpHandler handler,
             HttpServerLimits limits = {}, const WebConfig& web = {});
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Closes the listener and every open connection so io_context::run() can
  // return. Idempotent.
  void stop();
  // Replaces the web configuration for connections accepted from now on (a
  // reload keeps the listener and open connections). Throws ConfigError, and
  // keeps the old configuration, when the new TLS files cannot be loaded.
  void set_web_config(const WebConfig& web);
  std::uint16_t port() const;  // the bound port (useful with ":0")
  std::size_t open_connections() const;
  std::size_t max_connections() const;  // effective_max_connections() at start-up
  // Connections closed to make room for a newcomer, and newcomers refused
  // because every slot was busy, since start-up.
  std::uint64_t evicted_connections() const;
  std::uint64_t refused_connections() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// Loads the TLS certificate, key and CA named by `web` the way HttpServer
// would, for --check-config; throws ConfigError naming the file and OpenSSL's
// reason.
void check_web_config(const WebConfig& web);

}  // namespace ibfx
