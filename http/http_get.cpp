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

}  // namespace

HttpGetResult http_get(const HttpGetRequest& get) {
  const auto end = get.deadline;
  const std::string& url = get.url;
  const bool is_unix = url.starts_with("unix://");
  const bool tls = url.starts_with("https://");
  std::string host = "localhost";
  std::string port;
  if (!is_unix) {
    const std::string rest = url.substr(tls ? 8 : 7);
    const std::size_t colon = rest.rfind(':');
    host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
      host = host.substr(1, host.size() - 2);  // [v6]:port
    }
  }

  Request request{http::verb::get, get.target, 11};
  request.set(http::field::host, is_unix ? std::string("localhost") : host + ":" + port);
  request.set(http::field::user_agent, "ibfabric_exporter");
  for (const auto& [name, value] : get.headers) request.set(name, value);
  request.keep_alive(false);

  asio::io_context io;
  Response response;
  response.body_limit(get.body_limit);
  boost::beast::flat_buffer buf;
  error_code result;
  bool done = false;
  HttpGetResult out;
  out.where = is_unix ? url : host + ":" + port;
  auto failed = [&](const std::string& what) {
    out.outcome = HttpGetResult::Outcome::kFailed;
    out.error = what;
    return out;
  };
  auto timed_out = [&]() {
    out.outcome = HttpGetResult::Outcome::kTimedOut;
    return out;
  };

  if (is_unix) {
    asio::local::stream_protocol::socket socket(io);
    socket.async_connect(asio::local::stream_protocol::endpoint(url.substr(7)), [&](error_code ec) {
      if (ec) {
        result = ec;
        done = true;
        return;
      }
      exchange(socket, request, response, buf, result, done);
    });
    if (!run_until(io, done, end, [&] { socket.close(); })) return timed_out();
  } else {
    asio::ip::tcp::resolver resolver(io);
    asio::ssl::context ssl(asio::ssl::context::tls_client);
    std::optional<asio::ssl::stream<asio::ip::tcp::socket>> tls_stream;
    asio::ip::tcp::socket plain(io);
    if (tls) {
      if (get.ca_file.empty()) {
        ssl.set_default_verify_paths();
      } else {
        error_code ec;
        ssl.load_verify_file(get.ca_file, ec);
        if (ec) return failed(get.ca_file + ": " + ec.message());
      }
      ssl.set_verify_mode(asio::ssl::verify_peer);
      tls_stream.emplace(io, ssl);
      // SNI, and the certificate must name the host (RFC 6125).
      // SSL_set_tlsext_host_name is a macro with a C cast; its function.
      SSL_ctrl(tls_stream->native_handle(), SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
               host.data());
      tls_stream->set_verify_callback(asio::ssl::host_name_verification(host));
    }
    auto& socket = tls ? tls_stream->next_layer() : plain;
    resolver.async_resolve(
        host, port, [&](error_code ec, const asio::ip::tcp::resolver::results_type& r) {
          if (ec) {
            result = ec;
            done = true;
            return;
          }
          asio::async_connect(
              socket, r, [&](error_code connect_ec, const asio::ip::tcp::endpoint&) {
                if (connect_ec) {
                  result = connect_ec;
                  done = true;
                  return;
                }
                if (!tls) return exchange(plain, request, response, buf, result, done);
                tls_stream->async_handshake(asio::ssl::stream_base::client, [&](error_code hs_ec) {
                  if (hs_ec) {
                    result = hs_ec;
                    done = true;
                    return;
                  }
                  exchange(*tls_stream, request, response, buf, result, done);
                });
              });
        });
    if (!run_until(io, done, end, [&] {
          resolver.cancel();
          error_code ignored;
          socket.close(ignored);
        })) {
      return timed_out();
    }
  }
  if (result && result != http::error::end_of_stream) return failed(result.message());
  if (!response.is_done()) return failed("answer cut short");
  out.outcome = HttpGetResult::Outcome::kAnswered;
  out.status = response.get().result_int();
  out.body = response.release().body();
  return out;
}

}  // namespace ibfx
