// Escaping for every context the status page writes untrusted text into
// (node descriptions are set by whoever runs the host or the switch): HTML
// text and attribute values (also SVG, which the page inlines as HTML),
// JSON strings, and a URL query component. Each function appends to `out`.
//
// Every one first reads its input as UTF-8: a byte that does not start a
// well-formed sequence (overlong forms, surrogates, beyond U+10FFFF,
// truncated) becomes U+FFFD, so that a NodeDescription of arbitrary bytes
// (IBA 14.2.5.2: 64 bytes, "UTF-8 encoded" by convention only) can never
// produce invalid JSON or let a browser re-synchronize mid-character.
#pragma once

#include <string>
#include <string_view>

namespace ibfx {

// HTML text or a double- or single-quoted attribute value: & < > " ' become
// character references; C0 and C1 controls, DEL and noncharacters become
// U+FFFD (HTML forbids them, XML 1.0 parsers of the SVG reject them).
void append_html(std::string& out, std::string_view text);
std::string html_escaped(std::string_view text);

// The inside of a JSON string (RFC 8259 section 7): " and \ escaped, control
// characters as \n, \t ... or \u00XX, and </ as <\/ so that the text stays
// inert should it ever be embedded in a <script> element.
void append_json(std::string& out, std::string_view text);
// With the quotes.
void append_json_string(std::string& out, std::string_view text);

// A query-string component (RFC 3986 section 3.4): unreserved characters
// as they are, every other byte of `text` as it is (not sanitized: the
// server decodes it back to the very bytes) as %XX.
void append_url_component(std::string& out, std::string_view text);

// The input with every ill-formed UTF-8 sequence replaced by U+FFFD.
std::string valid_utf8(std::string_view text);

}  // namespace ibfx
