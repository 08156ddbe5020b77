// One accepted HTTP connection, plain TCP or TLS: it reads requests under
// the limits' deadlines, checks basic auth, calls the handler, compresses
// and writes the response (whole or streamed), and lingers before closing
// so the client reads an error response. HttpServer accepts and admits the
// connection (connection_admission.h), then starts the session.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

#include "http/connection_admission.h"
#include "http/http_security.h"
#include "http/http_server.h"

namespace ibfx {

// What every session of one server shares with it; sessions keep it alive.
struct HttpSessionContext {
  HttpSessionContext(HttpHandler h, HttpServerLimits l, std::size_t max_connections)
      : handler(std::move(h)),
        limits(l),
        admission(max_connections, l.max_connections_per_client) {}
  const HttpHandler handler;
  const HttpServerLimits limits;
  ConnectionAdmission admission;
};

// The interface the server and ConnectionAdmission use; sessions differ in
// their stream (TCP or TLS).
class HttpSession {
 public:
  virtual ~HttpSession() = default;
  // Begins reading (after the TLS handshake) on the session's strand.
  virtual void start() = 0;
  virtual void close() = 0;
  // Closes the connection to make room for another one, unless it is busy
  // with a request; then it closes once the response is written. Runs on
  // the session's strand; the admission has already stopped counting it.
  virtual void evict() = 0;
  // Turns away a connection that was never started: a best-effort 503.
  virtual void reject() = 0;
  virtual boost::asio::any_io_executor executor() = 0;
};

// A session on `socket` (already accepted, with its own strand executor),
// TLS when security->tls is set. `id` is its key in context->admission; the
// session releases it when destroyed.
std::shared_ptr<HttpSession> make_http_session(std::shared_ptr<HttpSessionContext> context,
                                               std::uint64_t id,
                                               boost::asio::ip::tcp::socket socket,
                                               std::shared_ptr<const HttpSecurity> security);

}  // namespace ibfx
