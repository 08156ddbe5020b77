// A state file's JSON: its text, and reading it (or CBOR) field by field:
// each reading helper names the field it wanted and why it was refused
// ("events[3].root.port: not a count up to 255"), which is what the log
// line about a bad file says. Shared by every state file's codec
// (congestion events, link events, history).
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ibfx::json_fields {

// A field that is missing or of the wrong type: where and what, for the log.
struct BadField : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// JSON text of `value` with invalid UTF-8 (node descriptions are untrusted
// bytes) replaced by U+FFFD instead of throwing.
std::string dump(const nlohmann::json& value);

const nlohmann::json& field(const nlohmann::json& object, const char* key,
                            const std::string& where);
double number(const nlohmann::json& object, const char* key, const std::string& where);
std::uint64_t count(const nlohmann::json& object, const char* key, const std::string& where,
                    std::uint64_t max = UINT64_MAX);
std::string text(const nlohmann::json& object, const char* key, const std::string& where);
// "0x..." hexadecimal.
std::uint64_t guid(const nlohmann::json& object, const char* key, const std::string& where);

// An event's "state": "active" (nullopt) or "ended", then its "end".
std::optional<double> event_end(const nlohmann::json& object, const std::string& where);

// The head of an events state file's document, which decode_versioned
// checks: {"format", "version", "saved_at", "next_id"}.
nlohmann::json versioned_state(std::string_view format, int version, double saved_at,
                               std::uint64_t next_id);

// A state file's document: checks its "format" (else "not a <what> file")
// and "version" (else "version 7, this daemon reads version 1"), then runs
// `decode` over it. False with `error` for those, or for what `decode`
// threw (a BadField's where and what, a JSON error). Never throws.
bool decode_versioned(const nlohmann::json& document, std::string_view format, int version,
                      std::string_view what, std::string& error,
                      const std::function<void(const nlohmann::json&)>& decode);
// The same over JSON text: "not JSON (truncated or corrupt)" when it does
// not parse.
bool decode_versioned_text(std::string_view text, std::string_view format, int version,
                           std::string_view what, std::string& error,
                           const std::function<void(const nlohmann::json&)>& decode);
// `each` over the elements of the array `key` of `object`, with their place
// ("events[3]") for its errors; else "events: not an array".
void for_each_element(const nlohmann::json& object, const char* key,
                      const std::function<void(const nlohmann::json&, const std::string&)>& each);

}  // namespace ibfx::json_fields
