#include "analysis/json_fields.h"

#include <cstdlib>

namespace ibfx::json_fields {

std::string dump(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

using nlohmann::json;

const json& field(const json& object, const char* key, const std::string& where) {
  if (!object.is_object()) throw BadField(where + ": not an object");
  const auto it = object.find(key);
  if (it == object.end()) throw BadField(where + "." + key + ": missing");
  return *it;
}

double number(const json& object, const char* key, const std::string& where) {
  const json& v = field(object, key, where);
  if (!v.is_number()) throw BadField(where + "." + key + ": not a number");
  return v.get<double>();
}

std::uint64_t count(const json& object, const char* key, const std::string& where,
                    std::uint64_t max) {
  const json& v = field(object, key, where);
  if (!v.is_number_unsigned() || v.get<std::uint64_t>() > max) {
    throw BadField(where + "." + key + ": not a count up to " + std::to_string(max));
  }
  return v.get<std::uint64_t>();
}

std::string text(const json& object, const char* key, const std::string& where) {
  const json& v = field(object, key, where);
  if (!v.is_string()) throw BadField(where + "." + key + ": not a string");
  return v.get<std::string>();
}

std::uint64_t guid(const json& object, const char* key, const std::string& where) {
  const std::string s = text(object, key, where);
  char* end = nullptr;
  const std::uint64_t g = std::strtoull(s.c_str(), &end, 16);
  if (s.size() < 3 || s.compare(0, 2, "0x") != 0 || end == nullptr || *end != '\0') {
    throw BadField(where + "." + key + ": not a GUID");
  }
  return g;
}

nlohmann::json versioned_state(std::string_view format, int version, double saved_at,
                               std::uint64_t next_id) {
  nlohmann::json j;
  j["format"] = std::string(format);
  j["version"] = version;
  j["saved_at"] = saved_at;
  j["next_id"] = next_id;
  return j;
}

bool decode_versioned(const json& document, std::string_view format, int version,
                      std::string_view what, std::string& error,
                      const std::function<void(const json&)>& decode) {
  try {
    const auto f = document.is_object() ? document.find("format") : document.end();
    if (!document.is_object() || f == document.end() || !f->is_string() ||
        f->get<std::string>() != format) {
      error = "not a " + std::string(what) + " file";
      return false;
    }
    const json& v = field(document, "version", "");
    if (!v.is_number_integer() || v.get<std::int64_t>() != version) {
      error = "version " + v.dump() + ", this daemon reads version " + std::to_string(version);
      return false;
    }
    decode(document);
    return true;
  } catch (const BadField& e) {
    error = std::string(e.what()).substr(e.what()[0] == '.' ? 1 : 0);
    return false;
  } catch (const json::exception& e) {
    error = e.what();
    return false;
  }
}

std::optional<double> event_end(const json& object, const std::string& where) {
  const std::string state = text(object, "state", where);
  if (state == "ended") return number(object, "end", where);
  if (state != "active") throw BadField(where + ".state: \"" + state + "\", not active or ended");
  return std::nullopt;
}

bool decode_versioned_text(std::string_view text, std::string_view format, int version,
                           std::string_view what, std::string& error,
                           const std::function<void(const json&)>& decode) {
  const json document = json::parse(text.begin(), text.end(), nullptr, false);
  if (document.is_discarded()) {
    error = "not JSON (truncated or corrupt)";
    return false;
  }
  return decode_versioned(document, format, version, what, error, decode);
}

void for_each_element(const json& object, const char* key,
                      const std::function<void(const json&, const std::string&)>& each) {
  const json& array = field(object, key, "");
  if (!array.is_array()) throw BadField(std::string(key) + ": not an array");
  for (std::size_t i = 0; i < array.size(); ++i) {
    each(array[i], std::string(key) + "[" + std::to_string(i) + "]");
  }
}

}  // namespace ibfx::json_fields
