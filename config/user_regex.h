// Compiling a regular expression an operator wrote (topology.rail_regex,
// rail_by_name, tier_by_name, jobs.host_regex). Every such pattern goes
// through here, so every one gets the same limits and the same error text.
#pragma once

#include <cstddef>
#include <regex>
#include <stdexcept>
#include <string>

namespace ibfx {

// What compile_user_regex throws: "invalid regular expression "<p>": <why>".
class UserRegexError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// These patterns match node descriptions (at most 64 bytes, IBA 14.2.5.2
// NodeDescription) and Slurm host names: a few dozen characters each.
inline constexpr std::size_t kMaxUserRegexBytes = 256;
// libstdc++ copies a repeated atom's NFA states once per repetition, so
// a{1000} is a thousand copies and (a{1000}){1000} a million: nested counts
// multiply. It also parses a count into a signed long without an overflow
// check (a{99999999999999999999} is undefined behaviour inside the
// library). So the product of all counts in a pattern, and any
// backreference number, must stay within this before std::regex sees it;
// real patterns (\d{3}, [0-9]{1,2}) are far below.
inline constexpr long kMaxUserRegexRepeat = 1000;

// ECMAScript grammar, as std::regex's default. Throws UserRegexError.
std::regex compile_user_regex(const std::string& pattern);

}  // namespace ibfx
