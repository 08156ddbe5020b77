// What can be wrong with a cable (issue #34), worst last, and the
// thresholds that decide it. docs/links.md says what each condition means,
// where its thresholds come from and what the operator should do.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

// yaml-cpp's own spelling of its namespace.
namespace YAML {  // NOLINT(readability-identifier-naming)
class Node;
}

namespace ibfx {

// Ordered by severity: a link shows the worst one it has. `down` is worst
// (nothing crosses the cable), then `flapping` (every connection crossing it
// dies at each flap), then the error conditions, then `degraded` (it works,
// slower than it should), then `length_outlier` (its round trip is longer
// than its peers': a fact worth knowing, not a fault; it never alarms).
enum class LinkCondition : std::uint8_t {
  kNone,
  kLengthOutlier,
  kDegraded,
  kBerWarning,
  kLinkErrors,
  kBerError,
  kFlapping,
  kDown,
};
inline constexpr std::size_t kLinkConditionCount = 8;

// "length_outlier", "degraded", "ber_warning", "link_errors", "ber_error",
// "flapping", "down"; "none" for kNone.
std::string_view link_condition_name(LinkCondition c);
std::optional<LinkCondition> parse_link_condition(std::string_view name);
inline LinkCondition worst(LinkCondition a, LinkCondition b) { return a < b ? b : a; }
// Whether a condition makes a link unhealthy: an alert, a link event,
// infiniband_link_unhealthy. `length_outlier` is shown, never alarmed on
// (a longer cable works; docs/links.md).
inline bool link_condition_alarms(LinkCondition c) {
  return c != LinkCondition::kNone && c != LinkCondition::kLengthOutlier;
}

// The `links:` section of the config file. Defaults: NVIDIA UFM's port
// isolation (PDR plugin, Mellanox/ufm_sdk_3.0) for the BER thresholds and
// windows, UFM's Unhealthy Ports for flapping.
struct LinkHealthConfig {
  double short_window_seconds = 60;
  double long_window_seconds = 720;
  double ber_error_short = 1e-12;  // over the short window
  double ber_error_long = 1e-14;   // over the long window
  double ber_warning = 5e-15;      // over the long window
  // A BER condition clears once the long window's BER is at or below this
  // (hysteresis: a cable that erred stays flagged until it is clean).
  double ber_clear = 1e-15;
  // Errors a window needs before any BER verdict: one stray error never alarms.
  std::uint64_t min_errors = 3;
  // LinkErrorRecoveryCounter increments in the long window that make
  // `link_errors` (any LocalLinkIntegrityErrors or ExcessiveBufferOverrunErrors
  // increment does on its own).
  std::uint64_t link_error_recoveries = 3;
  // Downs (both ends' LinkDownedCounter moved) within flapping_window_seconds
  // that make `flapping`.
  std::uint32_t flapping_downs = 2;
  double flapping_window_seconds = 600;

  bool operator==(const LinkHealthConfig&) const = default;
};

// Parses the `links:` section. Throws ConfigError
// "<source>:<line>: links.<key>: <what>". A null node gives the defaults.
LinkHealthConfig parse_link_health_config(const YAML::Node& node, const std::string& source);

}  // namespace ibfx
