#include "http/http_server.h"

#include <sys/resource.h>

#include <algorithm>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core/bind_handler.hpp>
#include <chrono>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "base/log.h"
#include "base/rate_limit.h"
#include "config/config_error.h"
#include "config/listen_address.h"
#include "http/connection_admission.h"
#include "http/http_security.h"
#include "http/http_session.h"

namespace ibfx {

namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;
using boost::system::error_code;

namespace {

// A flood makes the server evict or refuse thousands of connections a
// second; the log says so at most this often.

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

// The listener: binds, accepts, admits each connection through the shared
// ConnectionAdmission and starts its session (http/http_session.h).
struct HttpServer::Impl : std::enable_shared_from_this<HttpServer::Impl> {
  Impl(asio::io_context& io, HttpHandler handler, HttpServerLimits limits,
       std::shared_ptr<const HttpSecurity> security)
      : io_(io),
        strand_(asio::make_strand(io)),
        acceptor_(strand_),
        retry_timer_(strand_),
        context_(std::make_shared<HttpSessionContext>(std::move(handler), limits,
                                                      effective_max_connections(limits))),
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
  static void evict(std::vector<std::shared_ptr<HttpSession>>& victims);
  // At most one warning a minute (kLogEvery); acceptor strand only.
  void warn_flood(const std::string& what);
  ConnectionAdmission& admission() { return context_->admission; }
  bool stopped() const { return context_->admission.stopped(); }

  asio::io_context& io_;
  asio::strand<asio::io_context::executor_type> strand_;  // acceptor + retry timer
  tcp::acceptor acceptor_;
  asio::steady_timer retry_timer_;
  const std::shared_ptr<HttpSessionContext> context_;
  std::uint16_t port_ = 0;
  RateLimit<> flood_log_{kLogEvery};   // acceptor strand
  std::uint64_t next_session_id_ = 0;  // acceptor strand
  mutable std::mutex security_mutex_;
  std::shared_ptr<const HttpSecurity> security_;
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
    std::vector<std::shared_ptr<HttpSession>> victims;
    if (ec == asio::error::no_descriptors ||
        ec == boost::system::errc::too_many_files_open_in_system) {
      admission().evict_oldest(victims);
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
  auto session = make_http_session(context_, id, std::move(socket), security());
  std::vector<std::shared_ptr<HttpSession>> victims;
  switch (admission().admit(id, session, client, victims)) {
    case ConnectionAdmission::Admission::kAdmitted:
      session->start();
      break;
    case ConnectionAdmission::Admission::kRefused:
      warn_flood("http: every one of " + std::to_string(admission().max_connections()) +
                 " connections is busy with a request (or client " + client +
                 " is at its limit): refusing new connections with 503");
      session->reject();
      break;
    case ConnectionAdmission::Admission::kStopped:
      session->close();
      break;
  }
  if (!victims.empty()) {
    const std::size_t per_client = admission().max_per_client();
    warn_flood("http: connection limit reached (" + std::to_string(admission().max_connections()) +
               " in all, " +
               (per_client > 0 ? std::to_string(per_client) + " per client"
                               : std::string("no per-client limit")) +
               "): closing the oldest idle or unfinished-header connections to admit new ones");
  }
  evict(victims);
  start_accept();
}

void HttpServer::Impl::evict(std::vector<std::shared_ptr<HttpSession>>& victims) {
  for (auto& victim : victims) {
    asio::dispatch(victim->executor(), [victim] { victim->evict(); });
  }
  victims.clear();
}

void HttpServer::Impl::warn_flood(const std::string& what) {
  const auto now = std::chrono::steady_clock::now();
  if (!flood_log_.allow(now)) return;
  log_warn(what + " (" + std::to_string(admission().evicted()) + " evicted, " +
           std::to_string(admission().refused()) +
           " refused since start-up; logged at most once a minute)");
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
    auto sessions = impl_->admission().stop();
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
  auto sessions = impl_->admission().stop();
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

std::size_t HttpServer::open_connections() const {
  return impl_->context_->admission.open_connections();
}

std::size_t HttpServer::max_connections() const {
  return impl_->context_->admission.max_connections();
}

std::uint64_t HttpServer::evicted_connections() const {
  return impl_->context_->admission.evicted();
}

std::uint64_t HttpServer::refused_connections() const {
  return impl_->context_->admission.refused();
}

}  // namespace ibfx
