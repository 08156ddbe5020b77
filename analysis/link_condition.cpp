#include "analysis/link_condition.h"

#include <array>

#include "config/yaml_reader.h"

namespace ibfx {

namespace {
constexpr std::array<std::string_view, kLinkConditionCount> kNames = {
    "none",        "length_outlier", "degraded", "ber_warning",
    "link_errors", "ber_error",      "flapping", "down"};
}  // namespace

std::string_view link_condition_name(LinkCondition c) {
  const auto i = static_cast<std::size_t>(c);
  return i < kNames.size() ? kNames[i] : "none";
}

std::optional<LinkCondition> parse_link_condition(std::string_view name) {
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == name) return static_cast<LinkCondition>(i);
  }
  return std::nullopt;
}

LinkHealthConfig parse_link_health_config(const YAML::Node& node, const std::string& source) {
  LinkHealthConfig c;
  if (!node.IsDefined() || node.IsNull()) return c;
  const yaml::SectionReader reader(node, source, "links");
  reader.for_each_entry(node, [&](const std::string& key, int line, const YAML::Node& value) {
    const int value_line = reader.line_of(value, line);
    auto ber = [&] { return reader.number(value, value_line, key, 1e-20, 1e-3); };
    if (key == "ber_short_window") {
      c.short_window_seconds = reader.number(value, value_line, key, 1, 3600);
    } else if (key == "ber_long_window") {
      c.long_window_seconds = reader.number(value, value_line, key, 1, 86400);
    } else if (key == "ber_error_short") {
      c.ber_error_short = ber();
    } else if (key == "ber_error_long") {
      c.ber_error_long = ber();
    } else if (key == "ber_warning") {
      c.ber_warning = ber();
    } else if (key == "ber_clear") {
      c.ber_clear = ber();
    } else if (key == "min_errors") {
      c.min_errors = static_cast<std::uint64_t>(reader.integer(value, value_line, key, 1, 1000000));
    } else if (key == "link_error_recoveries") {
      c.link_error_recoveries =
          static_cast<std::uint64_t>(reader.integer(value, value_line, key, 1, 1000000));
    } else if (key == "flapping_downs") {
      c.flapping_downs =
          static_cast<std::uint32_t>(reader.integer(value, value_line, key, 1, 1000));
    } else if (key == "flapping_window") {
      c.flapping_window_seconds = reader.number(value, value_line, key, 1, 86400);
    } else {
      reader.fail(line, key, "unknown key");
    }
  });
  if (c.long_window_seconds < c.short_window_seconds) {
    reader.fail(reader.section_line(), "ber_long_window", "shorter than ber_short_window");
  }
  if (c.ber_clear > c.ber_warning) {
    reader.fail(reader.section_line(), "ber_clear", "above ber_warning: it would never hold");
  }
  return c;
}

}  // namespace ibfx
