// Command-line reading shared by the test tools (ibfx-fabricgen,
// ibfx-scenario): "--name value", "--name=value" and bare switches, with one
// set of error messages. Each tool keeps its own options and cross-checks;
// this only walks argv and converts values.
//
//   ArgReader args(argc, argv);
//   while (args.next()) {
//     if (args.is("--out")) out = args.value();
//     else if (args.is("--servers")) servers = args.integer(1, 1 << 20);
//     else if (args.is("--summary")) { args.no_value(); summary = true; }
//     else args.unknown();
//   }
#pragma once

#include <charconv>
#include <cstddef>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ibfx::test {

// A bad command line: the tool prints it with its usage text, exit status 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class ArgReader {
 public:
  // argv[0] (the program) is skipped.
  ArgReader(int argc, const char* const* argv) {
    for (int i = 1; i < argc && argv != nullptr && argv[i] != nullptr; ++i) args_.emplace_back(argv[i]);
  }
  explicit ArgReader(std::vector<std::string_view> args) : args_(std::move(args)) {}

  // Moves to the next argument; false when there is none left.
  bool next() {
    if (next_ >= args_.size()) return false;
    raw_ = args_[next_++];
    name_ = raw_;
    inline_value_.reset();
    if (const auto eq = raw_.find('='); raw_.starts_with("--") && eq != std::string_view::npos) {
      inline_value_ = raw_.substr(eq + 1);
      name_ = raw_.substr(0, eq);
    }
    return true;
  }

  // The current option's name without any "=value", e.g. "--speed".
  std::string_view name() const { return name_; }
  bool is(std::string_view option) const { return name_ == option; }

  // The current option's value: after '=', or else the next argument. The
  // next argument is not taken when it is another option ("--out --summary"
  // almost certainly lost the file name).
  std::string value() {
    if (inline_value_) return std::string(*inline_value_);
    if (next_ >= args_.size() || args_[next_].starts_with("--")) {
      throw UsageError(std::string(name_) + ": missing value");
    }
    return std::string(args_[next_++]);
  }

  // The current option is a switch: "--summary=yes" is an error.
  void no_value() const {
    if (inline_value_) throw UsageError(std::string(name_) + " takes no value");
  }

  // The value as an integer in [min, max].
  long long integer(long long min, long long max) {
    const std::string text = value();
    long long n = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc() || end != text.data() + text.size()) {
      throw UsageError(std::string(name_) + ": not an integer: \"" + text + "\"");
    }
    if (n < min || n > max) {
      throw UsageError(std::string(name_) + ": " + text +
                       (max == std::numeric_limits<long long>::max()
                            ? " is below " + std::to_string(min)
                            : " out of range [" + std::to_string(min) + ", " +
                                  std::to_string(max) + "]"));
    }
    return n;
  }

  // The value as a finite number above zero.
  double positive_number() {
    const std::string text = value();
    double x = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), x);
    if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(x) || x <= 0) {
      throw UsageError(std::string(name_) + ": not a positive number: \"" + text + "\"");
    }
    return x;
  }

  // The current argument is not an option of this tool.
  [[noreturn]] void unknown() const {
    throw UsageError("unknown argument \"" + std::string(raw_) + "\"");
  }

 private:
  std::vector<std::string_view> args_;
  std::size_t next_ = 0;
  std::string_view raw_;
  std::string_view name_;
  std::optional<std::string_view> inline_value_;
};

}  // namespace ibfx::test
