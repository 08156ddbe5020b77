// A minimal JSON reader shared by the dashboard tests: enough for Grafana
// dashboards and Prometheus API replies (Debian's Boost 1.74 ships without
// Boost.JSON, and tests must not need python or jq).
#pragma once

#include <cctype>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ibfx::test {

struct JsonMember;

struct Json {
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };
  Type type = Type::kNull;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<Json> array;
  // Not std::pair<std::string, Json>: clang 14 with libstdc++ 12 rejects a
  // pair of the still-incomplete Json; a vector of an incomplete class is
  // fine (C++17), and the members keep the structured bindings [key, value].
  std::vector<JsonMember> object;

  const Json* find(std::string_view key) const;
  // Member or a null value: chains like j["a"]["b"] never throw.
  const Json& operator[](std::string_view key) const;
  std::string str() const { return type == Type::kString ? string : std::string(); }
  bool is_null() const { return type == Type::kNull; }
};

struct JsonMember {
  std::string key;
  Json value;
};

inline const Json* Json::find(std::string_view key) const {
  for (const auto& [k, v] : object) {
    if (k == key) return &v;
  }
  return nullptr;
}

inline const Json& Json::operator[](std::string_view key) const {
  static const Json null;
  const Json* v = find(key);
  return v != nullptr ? *v : null;
}

class JsonReader {
 public:
  explicit JsonReader(std::string_view text) : text_(text) {}
  Json parse() {
    Json v = value();
    skip_space();
    if (pos_ != text_.size()) fail("trailing characters");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("JSON: " + what + " at offset " + std::to_string(pos_));
  }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_])) != 0)
      ++pos_;
  }
  char peek() {
    skip_space();
    if (pos_ >= text_.size()) fail("unexpected end");
    return text_[pos_];
  }
  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  bool literal(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }
  Json value() {
    Json v;
    const char c = peek();
    if (c == '{') {
      v.type = Json::Type::kObject;
      ++pos_;
      if (peek() != '}') {
        do {
          std::string key = string_literal();
          expect(':');
          v.object.push_back(JsonMember{std::move(key), value()});
        } while (peek() == ',' && ++pos_ != 0);
      }
      expect('}');
      return v;
    }
    if (c == '[') {
      v.type = Json::Type::kArray;
      ++pos_;
      if (peek() != ']') {
        do {
          v.array.push_back(value());
        } while (peek() == ',' && ++pos_ != 0);
      }
      expect(']');
      return v;
    }
    if (c == '"') {
      v.type = Json::Type::kString;
      v.string = string_literal();
      return v;
    }
    if (literal("true") || literal("false")) {
      v.type = Json::Type::kBool;
      v.boolean = text_[pos_ - 1] == 'e' && text_[pos_ - 4] == 't';
      return v;
    }
    if (literal("null")) return v;
    const std::string rest(text_.substr(pos_, 64));
    char* end = nullptr;
    v.number = std::strtod(rest.c_str(), &end);
    if (end == rest.c_str()) fail("bad value");
    v.type = Json::Type::kNumber;
    pos_ += static_cast<std::size_t>(end - rest.c_str());
    return v;
  }
  std::string string_literal() {
    expect('"');
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      char c = text_[pos_++];
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size()) fail("bad escape");
      c = text_[pos_++];
      switch (c) {
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'r':
          out += '\r';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'u': {
          unsigned cp = hex4();
          if (cp >= 0xD800 && cp < 0xDC00 && literal("\\u")) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (hex4() - 0xDC00);
          }
          append_utf8(out, cp);
          break;
        }
        default:
          out += c;  // \" \\ \/
      }
    }
    if (pos_ >= text_.size()) fail("unterminated string");
    ++pos_;
    return out;
  }
  unsigned hex4() {
    if (pos_ + 4 > text_.size()) fail("bad \\u escape");
    const unsigned v =
        static_cast<unsigned>(std::stoul(std::string(text_.substr(pos_, 4)), nullptr, 16));
    pos_ += 4;
    return v;
  }
  static void append_utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

inline Json parse_json(std::string_view text) { return JsonReader(text).parse(); }

}  // namespace ibfx::test
