#include "jobs/hostlist.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <system_error>

#include "base/log_text.h"

namespace ibfx {
namespace {

struct Range {
  std::uint64_t lo = 0;
  std::uint64_t hi = 0;
  std::size_t width = 0;  // digits of lo: the zero padding of every number
};

// One host: literal pieces and range lists in turn; pieces[i] comes before
// ranges[i], the last piece has no ranges after it (and must be empty).
struct HostPattern {
  std::vector<std::string_view> pieces;
  std::vector<std::vector<Range>> ranges;
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

class Expander {
 public:
  Expander(std::string_view text, std::size_t max_hosts) : text_(text), max_(max_hosts) {}

  HostlistExpansion run() {
    std::size_t pos = 0;
    while (pos < text_.size() && out_.error.empty()) {
      if (text_[pos] == ',' || is_space(text_[pos])) {
        ++pos;
        continue;
      }
      // A host runs to the next separator outside brackets.
      std::size_t end = pos;
      int depth = 0;
      for (; end < text_.size(); ++end) {
        const char c = text_[end];
        if (depth <= 0 && (c == ',' || is_space(c))) break;
        if (c == '[') ++depth;
        if (c == ']') --depth;
      }
      host(text_.substr(pos, end - pos));
      pos = end;
    }
    if (!out_.error.empty()) out_.hosts.clear();
    return std::move(out_);
  }

 private:
  void fail(std::string_view token, const std::string& what) {
    if (out_.error.empty()) out_.error = "host " + quote(token) + ": " + what;
  }

  void host(std::string_view token) {
    HostPattern p;
    std::size_t pos = 0;
    while (true) {
      const std::size_t open = token.find_first_of("[]", pos);
      if (open == std::string_view::npos) {
        p.pieces.push_back(token.substr(pos));
        break;
      }
      if (token[open] == ']') return fail(token, "']' without '['");
      const std::size_t close = token.find_first_of("[]", open + 1);
      if (close == std::string_view::npos) return fail(token, "'[' without ']'");
      if (token[close] == '[') return fail(token, "nested '['");
      p.pieces.push_back(token.substr(pos, open - pos));
      std::vector<Range> list;
      if (!range_list(token, token.substr(open + 1, close - open - 1), list)) return;
      p.ranges.push_back(std::move(list));
      pos = close + 1;
    }
    if (!p.ranges.empty() && !p.pieces.back().empty()) {
      // Slurm 22.05 rejects "a[1-3]b" too; accepting it here would name
      // nodes Slurm cannot have.
      return fail(token, "text after the last ']'");
    }
    std::string name;
    emit(p, 0, name, token);
  }

  bool range_list(std::string_view token, std::string_view list, std::vector<Range>& out) {
    std::size_t pos = 0;
    while (true) {
      const std::size_t comma = std::min(list.find(',', pos), list.size());
      const std::string_view item = list.substr(pos, comma - pos);
      Range r;
      const std::size_t dash = item.find('-');
      const std::string_view lo = item.substr(0, dash);
      const std::string_view hi = dash == std::string_view::npos ? lo : item.substr(dash + 1);
      if (!number(lo, r.lo) || !number(hi, r.hi)) {
        fail(token, "invalid range " + quote(item) + " (expected N or N-M, N and M decimal)");
        return false;
      }
      if (r.hi < r.lo) {
        fail(token, "invalid range " + quote(item) + " (end before start)");
        return false;
      }
      if (r.hi - r.lo >= kHostlistMaxRange) {
        fail(token, "range " + quote(item) + " holds more than " +
                        std::to_string(kHostlistMaxRange) + " hosts");
        return false;
      }
      r.width = lo.size();
      out.push_back(r);
      if (comma == list.size()) return true;
      pos = comma + 1;
    }
  }

  static bool number(std::string_view digits, std::uint64_t& value) {
    if (digits.empty()) return false;
    for (const char c : digits) {
      if (!is_digit(c)) return false;
    }
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    return ec == std::errc() && ptr == digits.data() + digits.size();
  }

  // Cartesian product, the leftmost range varying slowest (Slurm's order).
  void emit(const HostPattern& p, std::size_t level, std::string& name, std::string_view token) {
    if (!out_.error.empty()) return;
    const std::size_t keep = name.size();
    name.append(p.pieces[level]);
    if (level == p.ranges.size()) {
      if (out_.hosts.size() >= max_) {
        fail(token, "the expression names more than " + std::to_string(max_) + " hosts");
      } else if (!name.empty()) {
        out_.hosts.push_back(name);
      }
      name.resize(keep);
      return;
    }
    const std::size_t base = name.size();
    for (const Range& r : p.ranges[level]) {
      for (std::uint64_t n = r.lo;; ++n) {
        std::array<char, 24> digits{};
        const auto res = std::to_chars(digits.data(), digits.data() + digits.size(), n);
        const auto len = static_cast<std::size_t>(res.ptr - digits.data());
        if (len < r.width) name.append(r.width - len, '0');
        name.append(digits.data(), len);
        emit(p, level + 1, name, token);
        name.resize(base);
        if (n == r.hi || !out_.error.empty()) break;
      }
    }
    name.resize(keep);
  }

  std::string_view text_;
  std::size_t max_;
  HostlistExpansion out_;
};

}  // namespace

HostlistExpansion expand_hostlist(std::string_view expression, std::size_t max_hosts) {
  return Expander(expression, max_hosts).run();
}

}  // namespace ibfx
