#include "daemon/http_server.h"

#include <malloc.h>
#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <cctype>
#include <charconv>
#include <chrono>
#include <limits>
#include <list>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/log.h"
#include "config/config.h"
#include "config/listen_address.h"
#include "daemon/basic_auth.h"
#include "daemon/content_negotiation.h"
#include "daemon/http_security.h"

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

// After this many connections at once, memory is handed back to the system
// once they are mostly gone (see connection_closed()).
constexpr std::size_t kTrimAfterConnections = 256;

// How much a kept-alive connection reads when its next request starts.
constexpr std::size_t kFirstRead = 1024;

// A flood makes the server evict or refuse thousands of connections a
// second; the log says so at most this often.
constexpr std::chrono::seconds kFloodLogInterval{60};

// Pause before accepting again after a failing accept (EMFILE etc.) so we do
// not spin on an error that will not go away immediately.
constexpr std::chrono::milliseconds kAcceptRetryDelay{100};

// Opens, binds and listens; on failure leaves the acceptor closed.
error_code try_listen(tcp::acceptor& acceptor, const tcp::endpoint& endpoint, bool dual_stack) {
  error_code ec;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec && dual_stack) acceptor.set_option(asio::ip::v6_only(false), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    error_code ignored;
    acceptor.close(ignored);
  }
  return ec;
}

}  // namespace

void check_web_config(const WebConfig& web) { make_http_security(web); }

std::size_t effective_max_connections(const HttpServerLimits& limits) {
  if (limits.max_connections > 0) return limits.max_connections;
  rlimit nofile{};
  if (::getrlimit(RLIMIT_NOFILE, &nofile) != 0 || nofile.rlim_cur == RLIM_INFINITY) {
    return kMaxAutoConnections;
  }
  const auto available = static_cast<std::size_t>(nofile.rlim_cur);
  // A tiny limit still leaves room for a few scrapes; accept() reports
  // EMFILE if even that is too much, and the server then evicts (below).
  if (available <= kReservedDescriptors + 16) return 16;
  return std::min(available - kReservedDescriptors, kMaxAutoConnections);
}

struct HttpServer::Impl : std::enable_shared_from_this<HttpServer::Impl> {
  // The interface stop() needs; sessions differ in their stream (TCP or TLS).
  class Session {
   public:
    virtual ~Session() = default;
    virtual void start() = 0;
    virtual void close() = 0;
    // Closes the connection to make room for another one, unless it is busy
    // with a request; then it closes once the response is written.
    virtual void evict() = 0;
    // Turns away a connection that was never started: a best-effort 503.
    virtual void reject() = 0;
    virtual asio::any_io_executor executor() = 0;
  };
  template <bool kTls>
  class SessionImpl;

  Impl(asio::io_context& io, HttpHandler handler, HttpServerLimits limits,
       std::shared_ptr<const HttpSecurity> security)
      : io_(io),
        strand_(asio::make_strand(io)),
        acceptor_(strand_),
        retry_timer_(strand_),
        handler_(std::move(handler)),
        limits_(limits),
        max_connections_(effective_max_connections(limits)),
        security_(std::move(security)) {}

  std::shared_ptr<const HttpSecurity> security() const {
    std::lock_guard lock(security_mutex_);
    return security_;
  }
  void set_security(std::shared_ptr<const HttpSecurity> security) {
    std::lock_guard lock(security_mutex_);
    security_ = std::move(security);
  }

  void listen(const std::string& address);
  void start_accept();
  void on_accept(error_code ec, tcp::socket socket);
  void evict(std::vector<std::shared_ptr<Session>>& victims);
  // At most one warning per kFloodLogInterval; acceptor strand only.
  void warn_flood(const std::string& what);

  enum class Admission { kAdmitted, kRefused, kStopped };
  // Registration is what lets stop() find live sessions and what the
  // connection limits count; it fails once the server is stopping so a
  // connection accepted concurrently is not leaked. To admit a newcomer at a
  // limit it unregisters the oldest evictable connections into `victims`
  // (the caller closes them, outside the lock).
  Admission register_session(std::uint64_t id, const std::shared_ptr<Session>& session,
                             const std::string& client,
                             std::vector<std::shared_ptr<Session>>& victims);
  void unregister_session(std::uint64_t id);
  // Evictable: idle, handshaking, sending its headers or lingering; not
  // while a request is being answered.
  void set_evictable(std::uint64_t id, bool evictable);
  std::vector<std::shared_ptr<Session>> begin_stop();
  bool stopped() const { return stopped_.load(); }

  asio::io_context& io_;
  asio::strand<asio::io_context::executor_type> strand_;  // acceptor + retry timer
  tcp::acceptor acceptor_;
  asio::steady_timer retry_timer_;
  HttpHandler handler_;
  HttpServerLimits limits_;
  std::uint16_t port_ = 0;
  std::atomic<std::size_t> open_connections_{0};
  std::atomic<std::size_t> peak_connections_{0};  // since the last trim

  void connection_opened() {
    const std::size_t open = open_connections_.fetch_add(1) + 1;
    std::size_t peak = peak_connections_.load();
    while (open > peak && !peak_connections_.compare_exchange_weak(peak, open)) {
    }
  }
  // A flood leaves the heap full of freed session and TLS buffers (about
  // 100 KiB per TLS connection) that glibc keeps; once it has subsided, give
  // them back to the system so the daemon's RSS returns to normal.
  void connection_closed() {
    const std::size_t open = open_connections_.fetch_sub(1) - 1;
    std::size_t peak = peak_connections_.load();
    if (peak >= kTrimAfterConnections && open <= peak / 8 &&
        peak_connections_.compare_exchange_strong(peak, open)) {
      ::malloc_trim(0);
    }
  }
  std::atomic<bool> stopped_{false};
  const std::size_t max_connections_;
  std::atomic<std::uint64_t> evicted_{0};
  std::atomic<std::uint64_t> refused_{0};
  std::optional<std::chrono::steady_clock::time_point> last_flood_log_;  // acceptor strand

  // Everything below sessions_mutex_ is the connection accounting. The
  // eviction order is the order in which connections last became evictable
  // (oldest first), kept both overall and per client address so that each
  // limit finds its victim in O(1).
  using Order = std::list<std::uint64_t>;
  struct Tracked {
    std::weak_ptr<Session> session;
    std::string client;
    bool evictable = false;
    Order::iterator in_all;
    Order::iterator in_client;
  };
  struct ClientConnections {
    std::size_t count = 0;
    Order evictable;
  };
  void untrack_locked(std::unordered_map<std::uint64_t, Tracked>::iterator it);
  bool evict_oldest_locked(Order& order, std::vector<std::shared_ptr<Session>>& victims);

  std::mutex sessions_mutex_;
  std::unordered_map<std::uint64_t, Tracked> sessions_;
  Order evictable_;
  std::unordered_map<std::string, ClientConnections> clients_;
  std::uint64_t next_session_id_ = 0;  // acceptor strand only
  mutable std::mutex security_mutex_;
  std::shared_ptr<const HttpSecurity> security_;
};

template <bool kTls>
class HttpServer::Impl::SessionImpl final : public HttpServer::Impl::Session,
                                            public std::enable_shared_from_this<SessionImpl<kTls>> {
  using Stream = std::conditional_t<kTls, beast::ssl_stream<beast::tcp_stream>, beast::tcp_stream>;

 public:
  SessionImpl(std::shared_ptr<HttpServer::Impl> server, std::uint64_t id, tcp::socket socket,
              std::shared_ptr<const HttpSecurity> security)
      : server_(std::move(server)),
        id_(id),
        security_(std::move(security)),
        stream_(make_stream(std::move(socket), *security_)),
        trusted_(!security_->authenticator),
        header_deadline_(Clock::now() + limits().header_timeout),
        trust_deadline_(header_deadline_) {
    server_->connection_opened();  // the destructor gives it back
  }

  ~SessionImpl() override {
    server_->unregister_session(id_);
    server_->connection_closed();
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

  const HttpServerLimits& limits() const { return server_->limits_; }

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
    server_->set_evictable(id_, !busy);
  }

  void handshake() {
    if constexpr (kTls) {
      if (server_->stopped()) return close();
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
    if (server_->stopped()) return close();
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
    if (server_->stopped()) return close();
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
        response = server_->handler_(request);
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
    if (server_->stopped()) return close();
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
    if (ec || drained_ > kMaxDrainBytes || server_->stopped()) return close();
    drain();
  }

  std::shared_ptr<HttpServer::Impl> server_;
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

void HttpServer::Impl::listen(const std::string& address) {
  ListenAddress target;
  try {
    target = parse_listen_address(address);
  } catch (const ConfigError& e) {
    throw std::runtime_error("cannot listen on " + address + ": " + e.what());
  }

  error_code ec;
  if (target.host.empty()) {
    // Prefer one dual-stack socket; hosts without IPv6 get plain IPv4.
    ec = try_listen(acceptor_, tcp::endpoint(asio::ip::address_v6::any(), target.port), true);
    if (ec)
      ec = try_listen(acceptor_, tcp::endpoint(asio::ip::address_v4::any(), target.port), false);
  } else {
    std::vector<tcp::endpoint> endpoints;
    auto literal = asio::ip::make_address(target.host, ec);
    if (!ec) {
      endpoints.emplace_back(literal, target.port);
    } else {
      tcp::resolver resolver(io_);
      auto results = resolver.resolve(target.host, std::to_string(target.port),
                                      tcp::resolver::numeric_service, ec);
      if (ec) {
        throw std::runtime_error("cannot listen on " + address + ": cannot resolve '" +
                                 target.host + "': " + ec.message());
      }
      for (const auto& entry : results) endpoints.push_back(entry.endpoint());
      // A single socket can only take one address; like most exporters, bind
      // "localhost" to 127.0.0.1 rather than whatever getaddrinfo lists first.
      std::stable_partition(endpoints.begin(), endpoints.end(),
                            [](const tcp::endpoint& e) { return e.address().is_v4(); });
      if (endpoints.empty()) ec = asio::error::host_not_found;
    }
    for (const auto& endpoint : endpoints) {
      ec = try_listen(acceptor_, endpoint, false);
      if (!ec) break;
    }
  }
  if (ec) throw std::runtime_error("cannot listen on " + address + ": " + ec.message());
  port_ = acceptor_.local_endpoint().port();
}

void HttpServer::Impl::start_accept() {
  acceptor_.async_accept(asio::make_strand(io_),
                         beast::bind_front_handler(&Impl::on_accept, shared_from_this()));
}

namespace {

// The limit key of a peer: its address, with IPv4-mapped IPv6 addresses (a
// dual-stack listener's IPv4 clients) spelled as IPv4.
std::string client_key(const tcp::socket& socket) {
  error_code ec;
  const auto endpoint = socket.remote_endpoint(ec);
  if (ec) return {};
  auto address = endpoint.address();
  if (address.is_v6() && address.to_v6().is_v4_mapped()) {
    address = asio::ip::make_address_v4(asio::ip::v4_mapped, address.to_v6());
  }
  return address.to_string();
}

}  // namespace

void HttpServer::Impl::on_accept(error_code ec, tcp::socket socket) {
  if (stopped() || ec == asio::error::operation_aborted) return;
  if (ec) {
    // Out of descriptors (EMFILE/ENFILE) despite the reserve: give one back
    // by evicting the oldest idle connection, so a scrape still gets in.
    std::vector<std::shared_ptr<Session>> victims;
    if (ec == asio::error::no_descriptors ||
        ec == boost::system::errc::too_many_files_open_in_system) {
      std::lock_guard lock(sessions_mutex_);
      evict_oldest_locked(evictable_, victims);
    }
    evict(victims);
    warn_flood("http: accept failed: " + ec.message() +
               (victims.empty() ? "" : "; closed the oldest idle connection"));
    retry_timer_.expires_after(kAcceptRetryDelay);
    retry_timer_.async_wait([self = shared_from_this()](error_code wait_ec) {
      if (!wait_ec && !self->stopped()) self->start_accept();
    });
    return;
  }
  const std::uint64_t id = next_session_id_++;
  const std::string client = client_key(socket);
  auto current = security();
  std::shared_ptr<Session> session;
  if (current->tls) {
    session = std::make_shared<SessionImpl<true>>(shared_from_this(), id, std::move(socket),
                                                  std::move(current));
  } else {
    session = std::make_shared<SessionImpl<false>>(shared_from_this(), id, std::move(socket),
                                                   std::move(current));
  }
  std::vector<std::shared_ptr<Session>> victims;
  switch (register_session(id, session, client, victims)) {
    case Admission::kAdmitted:
      session->start();
      break;
    case Admission::kRefused:
      refused_.fetch_add(1);
      warn_flood("http: every one of " + std::to_string(max_connections_) +
                 " connections is busy with a request (or client " + client +
                 " is at its limit): refusing new connections with 503");
      session->reject();
      break;
    case Admission::kStopped:
      session->close();
      break;
  }
  if (!victims.empty()) {
    warn_flood("http: connection limit reached (" + std::to_string(max_connections_) + " in all, " +
               (limits_.max_connections_per_client > 0
                    ? std::to_string(limits_.max_connections_per_client) + " per client"
                    : std::string("no per-client limit")) +
               "): closing the oldest idle or unfinished-header connections to admit new ones");
  }
  evict(victims);
  start_accept();
}

void HttpServer::Impl::evict(std::vector<std::shared_ptr<Session>>& victims) {
  for (auto& victim : victims) {
    asio::dispatch(victim->executor(), [victim] { victim->evict(); });
  }
  victims.clear();
}

void HttpServer::Impl::warn_flood(const std::string& what) {
  const auto now = std::chrono::steady_clock::now();
  if (last_flood_log_ && now - *last_flood_log_ < kFloodLogInterval) return;
  last_flood_log_ = now;
  log_warn(what + " (" + std::to_string(evicted_.load()) + " evicted, " +
           std::to_string(refused_.load()) +
           " refused since start-up; logged at most once a minute)");
}

HttpServer::Impl::Admission HttpServer::Impl::register_session(
    std::uint64_t id, const std::shared_ptr<Session>& session, const std::string& client,
    std::vector<std::shared_ptr<Session>>& victims) {
  std::lock_guard lock(sessions_mutex_);
  if (stopped_.load()) return Admission::kStopped;
  if (limits_.max_connections_per_client > 0) {
    auto own = clients_.find(client);
    if (own != clients_.end() && own->second.count >= limits_.max_connections_per_client &&
        !evict_oldest_locked(own->second.evictable, victims)) {
      return Admission::kRefused;
    }
  }
  while (sessions_.size() >= max_connections_) {
    if (!evict_oldest_locked(evictable_, victims)) return Admission::kRefused;
  }
  // A new connection is evictable from the start: it is handshaking or
  // waiting for its request line.
  auto& connections = clients_[client];
  ++connections.count;
  Tracked tracked;
  tracked.session = session;
  tracked.client = client;
  tracked.evictable = true;
  tracked.in_all = evictable_.insert(evictable_.end(), id);
  tracked.in_client = connections.evictable.insert(connections.evictable.end(), id);
  sessions_.emplace(id, std::move(tracked));
  return Admission::kAdmitted;
}

void HttpServer::Impl::untrack_locked(std::unordered_map<std::uint64_t, Tracked>::iterator it) {
  Tracked& tracked = it->second;
  const auto client = clients_.find(tracked.client);
  if (tracked.evictable) {
    evictable_.erase(tracked.in_all);
    client->second.evictable.erase(tracked.in_client);
  }
  if (--client->second.count == 0) clients_.erase(client);
  sessions_.erase(it);
}

bool HttpServer::Impl::evict_oldest_locked(Order& order,
                                           std::vector<std::shared_ptr<Session>>& victims) {
  if (order.empty()) return false;
  const auto it = sessions_.find(order.front());
  // A session whose last reference is going away has no one to close;
  // its slot is free all the same.
  if (auto victim = it->second.session.lock()) victims.push_back(std::move(victim));
  untrack_locked(it);  // may destroy `order` (the client's last connection)
  evicted_.fetch_add(1);
  return true;
}

void HttpServer::Impl::unregister_session(std::uint64_t id) {
  std::lock_guard lock(sessions_mutex_);
  const auto it = sessions_.find(id);
  if (it != sessions_.end()) untrack_locked(it);  // an evicted one is gone already
}

void HttpServer::Impl::set_evictable(std::uint64_t id, bool evictable) {
  std::lock_guard lock(sessions_mutex_);
  const auto it = sessions_.find(id);
  if (it == sessions_.end() || it->second.evictable == evictable) return;
  Tracked& tracked = it->second;
  auto& own = clients_.find(tracked.client)->second;
  if (evictable) {
    tracked.in_all = evictable_.insert(evictable_.end(), id);
    tracked.in_client = own.evictable.insert(own.evictable.end(), id);
  } else {
    evictable_.erase(tracked.in_all);
    own.evictable.erase(tracked.in_client);
  }
  tracked.evictable = evictable;
}

std::vector<std::shared_ptr<HttpServer::Impl::Session>> HttpServer::Impl::begin_stop() {
  std::lock_guard lock(sessions_mutex_);
  stopped_.store(true);
  std::vector<std::shared_ptr<Session>> live;
  for (auto& [id, tracked] : sessions_) {
    if (auto session = tracked.session.lock()) live.push_back(std::move(session));
  }
  return live;
}

HttpServer::HttpServer(boost::asio::io_context& io, const std::string& listen_address,
                       HttpHandler handler, HttpServerLimits limits, const WebConfig& web)
    : impl_(std::make_shared<Impl>(io, std::move(handler), limits, make_http_security(web))) {
  impl_->listen(listen_address);
  impl_->start_accept();
}

HttpServer::~HttpServer() {
  // Synchronous on purpose: once we return, the handler (and whatever it
  // captured) must never be called again. Pending completions still hold the
  // Impl alive and finish with operation_aborted.
  try {
    auto sessions = impl_->begin_stop();
    error_code ignored;
    impl_->acceptor_.close(ignored);
    impl_->retry_timer_.cancel();
    for (auto& session : sessions) session->close();
  } catch (const std::exception& e) {
    // Only a failing mutex or allocation gets here; a destructor must not throw.
    log_error(std::string("http: stopping the server: ") + e.what());
  }
}

void HttpServer::stop() {
  auto sessions = impl_->begin_stop();
  asio::dispatch(impl_->strand_, [impl = impl_] {
    error_code ignored;
    impl->acceptor_.close(ignored);
    impl->retry_timer_.cancel();
  });
  for (auto& session : sessions) {
    asio::dispatch(session->executor(), [session] { session->close(); });
  }
}

void HttpServer::set_web_config(const WebConfig& web) {
  impl_->set_security(make_http_security(web));
}

std::uint16_t HttpServer::port() const { return impl_->port_; }

std::size_t HttpServer::open_connections() const { return impl_->open_connections_.load(); }

std::size_t HttpServer::max_connections() const { return impl_->max_connections_; }

std::uint64_t HttpServer::evicted_connections() const { return impl_->evicted_.load(); }

std::uint64_t HttpServer::refused_connections() const { return impl_->refused_.load(); }

}  // namespace ibfx
