#include "http/http_session.h"

#include <algorithm>
#include <array>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <exception>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "base/log.h"
#include "http/content_negotiation.h"
#include "http/gzip_writer.h"

namespace ibfx {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using boost::system::error_code;

namespace {

// After an error response we stop reading requests but keep draining what the
// client already sent for a short while: closing a socket with unread data
// makes the kernel send RST, which can destroy the response before the client
// reads it.
constexpr std::size_t kMaxDrainBytes = std::size_t{64} * 1024;
constexpr std::chrono::milliseconds kMinDrain{1000};
constexpr std::chrono::milliseconds kMaxDrain{2000};

// How much a kept-alive connection reads when its next request starts.
constexpr std::size_t kFirstRead = 1024;

template <bool kTls>
class SessionImpl final : public HttpSession,
                          public std::enable_shared_from_this<SessionImpl<kTls>> {
  using Stream = std::conditional_t<kTls, beast::ssl_stream<beast::tcp_stream>, beast::tcp_stream>;

 public:
  SessionImpl(std::shared_ptr<HttpSessionContext> context, std::uint64_t id, tcp::socket socket,
              std::shared_ptr<const HttpSecurity> security)
      : context_(std::move(context)),
        id_(id),
        security_(std::move(security)),
        stream_(make_stream(std::move(socket), *security_)),
        trusted_(!security_->authenticator),
        header_deadline_(Clock::now() + limits().header_timeout),
        trust_deadline_(header_deadline_) {
    context_->admission.connection_opened();  // the destructor gives it back
  }

  ~SessionImpl() override {
    context_->admission.release(id_);
    context_->admission.connection_closed();
  }

  SessionImpl(const SessionImpl&) = delete;
  SessionImpl& operator=(const SessionImpl&) = delete;

  void start() override {
    if constexpr (kTls) {
      asio::dispatch(executor(),
                     beast::bind_front_handler(&SessionImpl::handshake, this->shared_from_this()));
    } else {
      asio::dispatch(executor(), beast::bind_front_handler(&SessionImpl::read_request,
                                                           this->shared_from_this()));
    }
  }

  // Runs on the session's strand (posted by stop()) or synchronously from
  // ~HttpServer when no other thread runs the io_context.
  void close() override { tcp_layer().close(); }

  // Runs on the session's strand; the server has already stopped counting
  // this connection.
  void evict() override {
    if (busy_) {
      evict_after_response_ = true;
    } else {
      close();
    }
  }

  // Called on the acceptor's strand before start(): nothing else touches the
  // socket yet. Best effort: a fresh socket's send buffer always takes this.
  void reject() override {
    static constexpr std::string_view kResponse =
        "HTTP/1.1 503 Service Unavailable\r\n"
        "Content-Type: text/plain; charset=utf-8\r\n"
        "Content-Length: 21\r\n"
        "Retry-After: 1\r\n"
        "Connection: close\r\n"
        "\r\n"
        "Too many connections\n";
    auto& socket = tcp_layer().socket();
    error_code ignored;
    socket.non_blocking(true, ignored);
    // A TLS client would read the plain-text 503 as a broken handshake; it
    // gets the connection closed instead.
    if constexpr (!kTls)
      socket.write_some(asio::buffer(kResponse.data(), kResponse.size()), ignored);
    socket.shutdown(tcp::socket::shutdown_send, ignored);
    socket.close(ignored);
  }

  asio::any_io_executor executor() override { return stream_.get_executor(); }

 private:
  static Stream make_stream(tcp::socket socket, const HttpSecurity& security) {
    if constexpr (kTls) {
      return Stream(beast::tcp_stream(std::move(socket)), *security.tls);
    } else {
      return Stream(std::move(socket));
    }
  }

  using Clock = std::chrono::steady_clock;

  beast::tcp_stream& tcp_layer() { return beast::get_lowest_layer(stream_); }

  const HttpServerLimits& limits() const { return context_->limits; }

  // Every socket operation runs under a deadline; a connection that has not
  // yet shown valid credentials never gets one past trust_deadline_, so an
  // unauthenticated client cannot hold a slot longer than the header
  // timeout, however many 401s it collects.
  void expire_at(Clock::time_point at) {
    if (!trusted_) at = std::min(at, trust_deadline_);
    tcp_layer().expires_at(at);
  }

  // The progress deadline of a write, or of the wait for the next request.
  void arm_timeout() {
    if (limits().idle_timeout.count() > 0) {
      expire_at(Clock::now() + limits().idle_timeout);
    } else if (trusted_) {
      tcp_layer().expires_never();
    } else {
      expire_at(trust_deadline_);
    }
  }

  // Busy connections are never evicted; everything else (idle, handshaking,
  // sending headers, lingering) is fair game once the server is full.
  void set_busy(bool busy) {
    if (busy == busy_) return;
    busy_ = busy;
    context_->admission.set_evictable(id_, !busy);
  }

  void handshake() {
    if constexpr (kTls) {
      if (context_->admission.stopped()) return close();
      // The header deadline, counted from the accept, also bounds the
      // handshake: a client that connects and says nothing (or speaks plain
      // HTTP and waits) cannot hold a slot.
      expire_at(header_deadline_);
      stream_.async_handshake(
          ssl::stream_base::server,
          beast::bind_front_handler(&SessionImpl::on_handshake, this->shared_from_this()));
    }
  }

  void on_handshake(error_code ec) {
    // A plain-HTTP request or a bad client certificate ends here: OpenSSL has
    // already sent its alert (if it could); just drop the connection.
    if (ec) return close();
    read_request();
  }

  void read_request() {
    if (context_->admission.stopped()) return close();
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(std::min<std::size_t>(
        limits().max_header_bytes, std::numeric_limits<std::uint32_t>::max())));
    // The body limit is applied once we know the method (see on_header); boost::none would
    // trip a Beast 1.74 comparison bug, so "unlimited" is spelled as the maximum.
    parser_->body_limit(std::numeric_limits<std::uint64_t>::max());
    // One deadline for the request line and headers, set when the request
    // began: a client trickling bytes cannot extend it.
    expire_at(header_deadline_);
    http::async_read_header(
        stream_, buffer_, *parser_,
        beast::bind_front_handler(&SessionImpl::on_header, this->shared_from_this()));
  }

  void on_header(error_code ec, std::size_t /*bytes*/) {
    if (ec) return on_read_error(ec);
    set_busy(true);
    auto& req = parser_->get();
    if (req.method() != http::verb::get && req.method() != http::verb::head) {
      // A body we are not going to read would be parsed as the next request.
      bool has_body = !parser_->is_done();
      auto res = simple_response(http::status::method_not_allowed, "Method Not Allowed\n",
                                 req.keep_alive() && !has_body, req.version());
      res.set(http::field::allow, "GET, HEAD");
      return write(std::move(res));
    }
    if (parser_->is_done()) return handle_request();
    auto length = parser_->content_length();
    if (length && *length > limits().max_body_bytes) return on_read_error(http::error::body_limit);
    parser_->body_limit(limits().max_body_bytes);
    http::async_read(stream_, buffer_, *parser_,
                     beast::bind_front_handler(&SessionImpl::on_body, this->shared_from_this()));
  }

  void on_body(error_code ec, std::size_t /*bytes*/) {
    if (ec) return on_read_error(ec);
    handle_request();
  }

  void on_read_error(error_code ec) {
    if (ec == http::error::header_limit) {
      return write(simple_response(http::status::request_header_fields_too_large,
                                   "Request Header Fields Too Large\n", false));
    }
    if (ec == http::error::body_limit) {
      return write(simple_response(http::status::payload_too_large, "Payload Too Large\n", false));
    }
    // partial_message: the client went away mid-request, nobody to answer.
    if (ec.category() == http::make_error_code(http::error::bad_method).category() &&
        ec != http::error::partial_message && ec != http::error::end_of_stream) {
      return write(simple_response(http::status::bad_request, "Bad Request\n", false));
    }
    // end_of_stream, timeout (Beast already closed the socket), reset, aborted,
    // a TLS peer that vanished without close_notify.
    close();
  }

  http::response<http::string_body> simple_response(http::status status, std::string body,
                                                    bool keep_alive, unsigned version = 11) {
    http::response<http::string_body> res{status, version};
    res.set(http::field::content_type, "text/plain; charset=utf-8");
    res.keep_alive(keep_alive);
    res.body() = std::move(body);
    res.prepare_payload();
    return res;
  }

  bool authorized(const http::request<http::string_body>& req) {
    if (!security_->authenticator) return true;
    const auto it = req.find(http::field::authorization);
    return it != req.end() && security_->authenticator->check_header(
                                  std::string_view(it->value().data(), it->value().size()));
  }

  void handle_request() {
    if (context_->admission.stopped()) return close();
    auto& req = parser_->get();
    HttpRequest request;
    request.method = std::string(req.method_string());
    request.target = std::string(req.target());
    request.path = request.target.substr(0, request.target.find('?'));
    std::string accept_encoding;
    for (auto it = req.find(http::field::accept_encoding);
         it != req.end() && it->name() == http::field::accept_encoding; ++it) {
      if (!accept_encoding.empty()) accept_encoding += ',';
      accept_encoding += std::string(it->value());
    }
    request.accepts_gzip = accepts_gzip(accept_encoding);

    HttpResponse response;
    const bool authorized_request = authorized(req);
    if (authorized_request) trusted_ = true;
    if (!authorized_request) {
      response = HttpResponse{401, "text/plain; charset=utf-8", "Unauthorized\n", false};
    } else {
      try {
        response = context_->handler(request);
        if (response.status < 200 || response.status > 599)
          throw std::runtime_error("invalid status " + std::to_string(response.status));
      } catch (const std::exception& e) {
        log_error("http: handler failed for " + request.path + ": " + e.what());
        response = HttpResponse{500, "text/plain; charset=utf-8", "Internal Server Error\n", false};
      } catch (...) {
        log_error("http: handler failed for " + request.path + ": unknown exception");
        response = HttpResponse{500, "text/plain; charset=utf-8", "Internal Server Error\n", false};
      }
    }

    http::response<http::string_body> res;
    res.result(static_cast<unsigned>(response.status));
    res.version(req.version());
    res.keep_alive(req.keep_alive());
    for (const auto& [name, value] : security_->headers) res.set(name, value);
    for (const auto& [name, value] : response.headers) res.set(name, value);
    if (!authorized_request) {
      res.set(http::field::www_authenticate, "Basic realm=\"ibfabric_exporter\"");
    }
    res.set(http::field::content_type, response.content_type);
    if (response.stream) {
      if (response.precompressed_gzip) {
        res.set(http::field::vary, "Accept-Encoding");
        res.set(http::field::content_encoding, "gzip");
      }
      res.content_length(response.stream->size);
      // HEAD: the headers the GET would have, Content-Length included.
      if (req.method() == http::verb::head || !response.stream->next) return write(std::move(res));
      return write_streamed(std::move(res), std::move(*response.stream));
    }
    if (response.precompressed_gzip) {
      // The handler compressed (and typically cached) the body itself, having
      // checked request.accepts_gzip; compressing again would corrupt it.
      res.set(http::field::vary, "Accept-Encoding");
      res.set(http::field::content_encoding, "gzip");
    } else if (response.compressible && response.body.size() >= limits().gzip_min_bytes) {
      // Caches must know the representation depends on Accept-Encoding, even
      // when this particular client got the identity encoding.
      res.set(http::field::vary, "Accept-Encoding");
      if (request.accepts_gzip) {
        try {
          response.body = gzip_compress(response.body);
          res.set(http::field::content_encoding, "gzip");
        } catch (const std::exception& e) {
          // Identity is always acceptable; an exception here would escape io_context::run().
          log_warn("http: gzip failed for " + request.path + ": " + e.what());
        }
      }
    }
    bool no_body = response.status == 204 || response.status == 304;
    if (!no_body) res.content_length(response.body.size());
    // HEAD gets the headers the GET would have, Content-Length included.
    if (req.method() != http::verb::head && !no_body) res.body() = std::move(response.body);
    write(std::move(res));
  }

  void write(http::response<http::string_body>&& res) {
    set_busy(true);
    res_ = std::move(res);
    arm_timeout();
    http::async_write(stream_, res_,
                      beast::bind_front_handler(&SessionImpl::on_write, this->shared_from_this()));
  }

  void on_write(error_code ec, std::size_t /*bytes*/) {
    if (ec) return close();
    if (res_.need_eof() || evict_after_response_) return linger();
    wait_for_request();
  }

  // Between requests a connection holds only its socket: the parser, the
  // response and the read buffer are released, and the wait for the next
  // request's first byte has the idle deadline; the header deadline starts
  // with that byte (Go's IdleTimeout, then ReadHeaderTimeout).
  void wait_for_request() {
    if (context_->admission.stopped()) return close();
    parser_.reset();
    res_ = {};
    set_busy(false);
    if (buffer_.size() > 0) {  // a pipelined request is already here
      header_deadline_ = Clock::now() + limits().header_timeout;
      return read_request();
    }
    buffer_.shrink_to_fit();
    arm_timeout();
    stream_.async_read_some(
        buffer_.prepare(kFirstRead),
        beast::bind_front_handler(&SessionImpl::on_first_bytes, this->shared_from_this()));
  }

  void on_first_bytes(error_code ec, std::size_t bytes) {
    // Idle timeout, the client closing, or an eviction: nothing to answer.
    if (ec) return close();
    buffer_.commit(bytes);
    header_deadline_ = Clock::now() + limits().header_timeout;
    read_request();
  }

  // A streamed body: the header first, then one piece at a time, each piece
  // produced only once the previous one is on the wire. Every piece gets a
  // fresh idle deadline (a client that stops reading is dropped; a slow but
  // steady one may take as long as the body needs).
  void write_streamed(http::response<http::string_body>&& head, HttpResponse::BodyStream body) {
    set_busy(true);
    http::response<http::buffer_body> res{std::move(head.base())};
    stream_res_.emplace(std::move(res));
    stream_body_ = std::move(body);
    stream_more_ = true;
    stream_sr_.emplace(*stream_res_);
    arm_timeout();
    http::async_write_header(
        stream_, *stream_sr_,
        beast::bind_front_handler(&SessionImpl::on_stream_write, this->shared_from_this()));
  }

  void on_stream_write(error_code ec, std::size_t /*bytes*/) {
    if (ec == http::error::need_buffer) ec = {};
    if (ec) return close();
    if (stream_sr_->is_done() || !stream_more_) return end_stream();
    try {
      stream_more_ = stream_body_.next(stream_piece_);
    } catch (const std::exception& e) {
      log_error(std::string("http: streamed body failed: ") + e.what());
      return close();
    }
    auto& b = stream_res_->body();
    b.data = stream_piece_.data();
    b.size = stream_piece_.size();
    b.more = stream_more_;
    arm_timeout();
    http::async_write(
        stream_, *stream_sr_,
        beast::bind_front_handler(&SessionImpl::on_stream_write, this->shared_from_this()));
  }

  void end_stream() {
    const bool eof = stream_res_->need_eof();
    stream_sr_.reset();
    stream_res_.reset();
    stream_body_ = {};
    stream_piece_ = std::string();
    if (eof || evict_after_response_) return linger();
    wait_for_request();
  }

  void linger() {
    set_busy(false);
    tcp_layer().expires_after(std::clamp(limits().idle_timeout, kMinDrain, kMaxDrain));
    if constexpr (kTls) {
      // close_notify tells the client the response is complete; whatever it
      // still sends is read and discarded by the shutdown itself.
      stream_.async_shutdown([self = this->shared_from_this()](error_code) { self->close(); });
    } else {
      error_code ignored;
      tcp_layer().socket().shutdown(tcp::socket::shutdown_send, ignored);
      drain();
    }
  }

  void drain() {
    if (!drain_buffer_) drain_buffer_ = std::make_unique<std::array<char, 4096>>();
    stream_.async_read_some(
        asio::buffer(*drain_buffer_),
        beast::bind_front_handler(&SessionImpl::on_drain, this->shared_from_this()));
  }

  void on_drain(error_code ec, std::size_t bytes) {
    drained_ += bytes;
    if (ec || drained_ > kMaxDrainBytes || context_->admission.stopped()) return close();
    drain();
  }

  std::shared_ptr<HttpSessionContext> context_;
  std::uint64_t id_;
  std::shared_ptr<const HttpSecurity> security_;
  Stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> res_;
  std::optional<http::response<http::buffer_body>> stream_res_;
  std::optional<http::response_serializer<http::buffer_body>> stream_sr_;
  HttpResponse::BodyStream stream_body_;
  std::string stream_piece_;
  bool stream_more_ = false;
  // Only lingering connections need it; idle ones should stay small.
  std::unique_ptr<std::array<char, 4096>> drain_buffer_;
  std::size_t drained_ = 0;
  bool busy_ = false;
  bool evict_after_response_ = false;
  // No basic auth configured, or this connection has sent valid credentials.
  bool trusted_;
  Clock::time_point header_deadline_;  // the current request's line and headers
  Clock::time_point trust_deadline_;   // of an untrusted connection: accept + header_timeout
};

}  // namespace

std::shared_ptr<HttpSession> make_http_session(std::shared_ptr<HttpSessionContext> context,
                                               std::uint64_t id, tcp::socket socket,
                                               std::shared_ptr<const HttpSecurity> security) {
  if (security->tls) {
    return std::make_shared<SessionImpl<true>>(std::move(context), id, std::move(socket),
                                               std::move(security));
  }
  return std::make_shared<SessionImpl<false>>(std::move(context), id, std::move(socket),
                                              std::move(security));
}

}  // namespace ibfx
