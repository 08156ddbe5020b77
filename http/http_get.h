// One GET, for a client of some other service (slurmrestd): over a unix
// socket ("unix:///path"), "http://host:port" or "https://host:port" (the
// system's CAs, SNI, the certificate must name the host, RFC 6125).
// Boost.Beast on a private io_context, one connection per request, the whole
// exchange (resolve, connect, TLS, write, read) bounded by one deadline; for
// a caller's own thread, never the server's. It says what happened and the
// caller words it: the caller knows what it asked for.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ibfx {

struct HttpGetRequest {
  std::string url;     // unix:///path, http://host:port or https://host:port ([v6]:port)
  std::string target;  // e.g. "/slurm/v0.0.38/jobs"
  // Sent after Host and User-Agent, in this order.
  std::vector<std::pair<std::string, std::string>> headers;
  std::size_t body_limit = 0;  // a longer body fails the GET
  std::chrono::steady_clock::time_point deadline;
  // https: the CAs (a PEM file) the server's certificate must chain to;
  // empty: the system's.
  std::string ca_file;
};

struct HttpGetResult {
  enum class Outcome : std::uint8_t { kAnswered, kTimedOut, kFailed };
  Outcome outcome = Outcome::kFailed;
  std::string where;    // the url for a unix socket, else host:port
  std::string error;    // kFailed: the transport's reason, or "answer cut short"
  unsigned status = 0;  // kAnswered: the HTTP status
  std::string body;     // kAnswered
};

HttpGetResult http_get(const HttpGetRequest& request);

}  // namespace ibfx
