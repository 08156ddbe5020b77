#include "http/http_get.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <optional>
#include <string>

namespace ibfx {
namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using boost::system::error_code;

using Request = http::request<http::empty_body>;
using Response = http::response_parser<http::string_body>;

// Runs `io` until `done` or the deadline; past it, `cancel` closes the
// connection so every pending handler completes with an error.
template <typename Cancel>
bool run_until(asio::io_context& io, const bool& done, std::chrono::steady_clock::time_point end,
               Cancel cancel) {
  while (!done && !io.stopped()) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= end) break;
    io.run_one_for(end - now);
  }
  if (done) return true;
  cancel();
  io.restart();
  io.run();
  return false;
}

// Write the request, read the answer: the part every transport shares.
template <typename Stream>
void exchange(Stream& stream, Request& request, Response& response, boost::beast::flat_buffer& buf,
              error_code& result, bool& done) {
  http::async_write(stream, request, [&](error_code ec, std::size_t) {
    if (ec) {
      result = ec;
      done = true;
      return;
    }
    http::async_read(stream, buf, response, [&](error_code read_ec, std::size_t) {
      result = read_ec;
      done = true;
    });
  });
}

// Where a URL points: a Unix socket, or a host and port (TLS for https).
struct Target {
  bool is_unix = false;
  bool tls = false;
  std::string host = "localhost";
  std::string port;
};

Target parse_target(const std::string& url) {
  Target t;
  t.is_unix = url.starts_with("unix://");
  t.tls = url.starts_with("https://");
  if (!t.is_unix) {
    const std::string rest = url.substr(t.tls ? 8 : 7);
    const std::size_t colon = rest.rfind(':');
    t.host = rest.substr(0, colon);
    t.port = rest.substr(colon + 1);
    if (t.host.size() > 2 && t.host.front() == '[' && t.host.back() == ']') {
      t.host = t.host.substr(1, t.host.size() - 2);  // [v6]:port
    }
  }
  return t;
}

Request make_request(const HttpGetRequest& get, const Target& t) {
  Request request{http::verb::get, get.target, 11};
  request.set(http::field::host, t.is_unix ? std::string("localhost") : t.host + ":" + t.port);
  request.set(http::field::user_agent, "ibfabric_exporter");
  for (const auto& [name, value] : get.headers) request.set(name, value);
  request.keep_alive(false);
  return request;
}

// One request's exchange, whatever the transport: what the handlers fill.
struct Exchange {
  asio::io_context io;
  Request request;
  Response response;
  boost::beast::flat_buffer buf;
  error_code result;
  bool done = false;

  // A step failed: the exchange ends with its error.
  void fail(error_code ec) {
    result = ec;
    done = true;
  }
};

// Over the Unix socket of a unix:// URL; false past the deadline.
bool exchange_unix(Exchange& x, const std::string& url, std::chrono::steady_clock::time_point end) {
  asio::local::stream_protocol::socket socket(x.io);
  socket.async_connect(asio::local::stream_protocol::endpoint(url.substr(7)), [&](error_code ec) {
    if (ec) return x.fail(ec);
    exchange(socket, x.request, x.response, x.buf, x.result, x.done);
  });
  return run_until(x.io, x.done, end, [&] { socket.close(); });
}

// The peer's certificate must be of the system's CAs, or of ca_file's; an
// error when ca_file cannot be read.
std::optional<std::string> set_up_tls(asio::ssl::context& ssl, const std::string& ca_file) {
  if (ca_file.empty()) {
    ssl.set_default_verify_paths();
  } else {
    error_code ec;
    ssl.load_verify_file(ca_file, ec);
    if (ec) return ca_file + ": " + ec.message();
  }
  ssl.set_verify_mode(asio::ssl::verify_peer);
  return std::nullopt;
}

// Over TCP, resolved and connected, then TLS for https://; false past the
// deadline. `error`: why TLS could not be set up.
bool exchange_tcp(Exchange& x, const HttpGetRequest& get, const Target& t,
                  std::optional<std::string>& error) {
  asio::ip::tcp::resolver resolver(x.io);
  asio::ssl::context ssl(asio::ssl::context::tls_client);
  std::optional<asio::ssl::stream<asio::ip::tcp::socket>> tls_stream;
  asio::ip::tcp::socket plain(x.io);
  std::string host = t.host;  // SSL_ctrl takes it as void*
  if (t.tls) {
    error = set_up_tls(ssl, get.ca_file);
    if (error) return true;
    tls_stream.emplace(x.io, ssl);
    // SNI, and the certificate must name the host (RFC 6125).
    // SSL_set_tlsext_host_name is a macro with a C cast; its function.
    SSL_ctrl(tls_stream->native_handle(), SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
             host.data());
    tls_stream->set_verify_callback(asio::ssl::host_name_verification(t.host));
  }
  auto& socket = t.tls ? tls_stream->next_layer() : plain;
  resolver.async_resolve(
      t.host, t.port, [&](error_code ec, const asio::ip::tcp::resolver::results_type& r) {
        if (ec) return x.fail(ec);
        asio::async_connect(socket, r, [&](error_code connect_ec, const asio::ip::tcp::endpoint&) {
          if (connect_ec) return x.fail(connect_ec);
          if (!t.tls) return exchange(plain, x.request, x.response, x.buf, x.result, x.done);
          tls_stream->async_handshake(asio::ssl::stream_base::client, [&](error_code hs_ec) {
            if (hs_ec) return x.fail(hs_ec);
            exchange(*tls_stream, x.request, x.response, x.buf, x.result, x.done);
          });
        });
      });
  return run_until(x.io, x.done, get.deadline, [&] {
    resolver.cancel();
    error_code ignored;
    socket.close(ignored);
  });
}

}  // namespace

HttpGetResult http_get(const HttpGetRequest& get) {
  const Target t = parse_target(get.url);
  Exchange x;
  x.request = make_request(get, t);
  x.response.body_limit(get.body_limit);
  HttpGetResult out;
  out.where = t.is_unix ? get.url : t.host + ":" + t.port;
  auto failed = [&](const std::string& what) {
    out.outcome = HttpGetResult::Outcome::kFailed;
    out.error = what;
    return out;
  };
  std::optional<std::string> setup_error;
  const bool in_time =
      t.is_unix ? exchange_unix(x, get.url, get.deadline) : exchange_tcp(x, get, t, setup_error);
  if (setup_error) return failed(*setup_error);
  if (!in_time) {
    out.outcome = HttpGetResult::Outcome::kTimedOut;
    return out;
  }
  if (x.result && x.result != http::error::end_of_stream) return failed(x.result.message());
  if (!x.response.is_done()) return failed("answer cut short");
  out.outcome = HttpGetResult::Outcome::kAnswered;
  out.status = x.response.get().result_int();
  out.body = x.response.release().body();
  return out;
}

}  // namespace ibfx
