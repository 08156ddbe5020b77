// libFuzzer target: the HTTP server's request handling, end to end. The input
// is written as the raw request bytes to a real loopback connection (so
// Beast's parser, our limits, error responses, pipelining, gzip and HEAD all
// run exactly as in the daemon), then the write side is shut down and the
// response is read until the server closes.
//
// One server and one io_context live for the whole fuzzing session and
// everything runs on this thread, so an iteration costs a connect and a few
// syscalls rather than a bind and a thread start.
//
// Findings besides crashes (finding(): __builtin_trap, so libFuzzer keeps the
// input):
// a response that does not start with a valid HTTP/1.1 status line, and a
// server that neither answers nor closes within the deadline.
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include "http/content_negotiation.h"
#include "http/gzip_writer.h"
#include "http/http_server.h"

namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

// Generous: the server's own idle timeout (1 s below) closes any connection
// well before this; reaching it means the connection was leaked.
constexpr std::chrono::seconds kDeadline{3};
constexpr std::size_t kMaxResponseBytes = 4 << 20;

// Mirrors the daemon's handler shapes: a large compressible body, a
// precompressed one, a throwing handler (500) and unknown paths (404).
ibfx::HttpResponse handle(const ibfx::HttpRequest& request) {
  ibfx::HttpResponse response;
  if (request.path == "/metrics") {
    response.body.reserve(8192);
    for (int i = 0; i < 200; ++i) {
      response.body +=
          "infiniband_port_transmit_wait_total{port=\"" + std::to_string(i) + "\"} 0\n";
    }
  } else if (request.path == "/gz") {
    response.body = "precompressed\n";
    if (request.accepts_gzip) {
      response.body = ibfx::gzip_compress(std::string(2048, 'x'));
      response.precompressed_gzip = true;
    }
  } else if (request.path == "/raw") {
    response.body = std::string(4096, 'y');
    response.compressible = false;
    response.content_type = "application/octet-stream";
  } else if (request.path == "/throw") {
    throw std::runtime_error("handler failed");
  } else if (request.path == "/") {
    response.content_type = "text/html; charset=utf-8";
    response.body = "<html><body><a href=\"/metrics\">Metrics</a></body></html>\n";
  } else {
    response.status = 404;
    response.body = "not found\n";
  }
  return response;
}

struct Harness {
  asio::io_context io;
  ibfx::HttpServer server;
  tcp::endpoint endpoint;

  Harness()
      : server(io, "127.0.0.1:0", handle, limits()),
        endpoint(asio::ip::address_v4::loopback(), server.port()) {}

  // Small limits so the 413/431 paths are reachable with fuzzer-sized inputs.
  static ibfx::HttpServerLimits limits() {
    ibfx::HttpServerLimits l;
    l.max_connections = 8;
    l.max_header_bytes = 1024;
    l.idle_timeout = std::chrono::seconds(1);
    l.header_timeout = std::chrono::seconds(1);
    l.gzip_min_bytes = 64;
    return l;
  }
};

bool is_status_line_start(std::string_view response) {
  // "HTTP/1.1 200 " at least; the reason phrase may be empty. An HTTP/1.0
  // request gets an HTTP/1.0 answer; nothing else is a version we speak.
  if (response.size() < 13) return false;
  const std::string_view version = response.substr(0, 9);
  if (version != "HTTP/1.1 " && version != "HTTP/1.0 ") return false;
  for (std::size_t i = 9; i < 12; ++i) {
    if (response[i] < '0' || response[i] > '9') return false;
  }
  return response[9] >= '1' && response[9] <= '5' && response[12] == ' ';
}

// Says why on stdout (tools/fuzz closes the target's stderr, not stdout),
// then traps so libFuzzer saves the input.
[[noreturn]] void finding(const std::string& what) {
  std::printf("http_fuzz finding: %s\n", what.c_str());
  std::fflush(stdout);
  __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Never destroyed: LSan sees it as reachable, and no exit-time teardown
  // races libFuzzer's own.
  static Harness* const harness = new Harness();
  asio::io_context& io = harness->io;

  // The Accept-Encoding parser is pure; feed it the raw input as well.
  (void)ibfx::accepts_gzip(std::string_view(reinterpret_cast<const char*>(data), size));

  // Connect through the io_context, not with a blocking connect(): libFuzzer's
  // SIGALRM (every timeout/2 + 1 s, installed without SA_RESTART) makes a
  // blocking loopback connect() fail with EINTR now and then on a busy
  // machine, which is no finding. Asio's reactor retries its waits.
  tcp::socket client(io);
  error_code ec;
  bool connected = false;
  client.async_connect(harness->endpoint, [&](error_code connect_ec) {
    ec = connect_ec;
    connected = true;
  });
  io.restart();
  const auto deadline = std::chrono::steady_clock::now() + kDeadline;
  while (!connected && std::chrono::steady_clock::now() < deadline) {
    io.run_one_until(deadline);
  }
  if (!connected || ec) {
    finding("cannot connect: " + (connected ? ec.message() : std::string("timed out")) +
            " (the listener must survive every previous input)");
  }

  std::string response;
  bool closed = false;
  bool written = false;
  asio::async_write(client, asio::buffer(data, size), [&](error_code write_ec, std::size_t) {
    written = true;
    // A server that answered early (431, 413) may reset; that is fine.
    error_code ignored;
    if (!write_ec) client.shutdown(tcp::socket::shutdown_send, ignored);
  });
  asio::async_read(client, asio::dynamic_buffer(response, kMaxResponseBytes),
                   [&](error_code, std::size_t) { closed = true; });

  while (!closed && std::chrono::steady_clock::now() < deadline) {
    io.run_one_until(deadline);
  }
  if (!closed) finding("the server neither answered nor closed");
  if (!response.empty() && !is_status_line_start(response)) {
    finding("not an HTTP status line: " + response.substr(0, 40));
  }

  client.close(ec);
  // The write may still be pending if the server stopped reading; its
  // handler refers to this frame, so it must run before we return.
  while (!written) io.run_one();
  // Let the server finish tearing the connection down so iterations do not
  // pile up connections against max_connections.
  while (harness->server.open_connections() > 0 && std::chrono::steady_clock::now() < deadline) {
    io.run_one_until(deadline);
  }
  if (harness->server.open_connections() > 0) finding("leaked a connection");
  return 0;
}
