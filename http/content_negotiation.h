// Content negotiation for the HTTP server: what a request's headers ask for.
#pragma once

#include <string_view>

namespace ibfx {

// True when an Accept-Encoding header value lets us answer with gzip
// ("gzip;q=0" and "*;q=0" forbid it; codings are case-insensitive; an
// explicit gzip entry beats the wildcard, RFC 9110 12.5.3).
bool accepts_gzip(std::string_view accept_encoding);

}  // namespace ibfx
