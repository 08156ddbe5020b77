// Durations, the table of config keys, and the config file's schema.
#include "config/config.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <regex>
#include <system_error>
#include <utility>

#include "base/log.h"
#include "config/listen_address.h"
#include "config/user_regex.h"
#include "config/yaml_reader.h"

namespace ibfx {
namespace {

[[noreturn]] void fail(const std::string& what) { throw ConfigError(what); }

struct DurationUnit {
  std::string_view name;
  std::int64_t ms;
};

// Largest first: like Prometheus, units must appear in this order, each at most once.
constexpr std::int64_t kDayMs = 24LL * 3600 * 1000;
constexpr std::array<DurationUnit, 7> kDurationUnits{{{"y", 365 * kDayMs},
                                                      {"w", 7 * kDayMs},
                                                      {"d", kDayMs},
                                                      {"h", 3600 * 1000LL},
                                                      {"m", 60 * 1000LL},
                                                      {"s", 1000LL},
                                                      {"ms", 1LL}}};

bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// One YAML scalar or one flag value. `plain` is false when the YAML text was
// quoted (or tagged): then it is a string even if it looks like a number.
struct Scalar {
  std::string_view text;
  bool plain = true;
};

void require_plain(const Scalar& v, std::string_view expected) {
  if (!v.plain) {
    fail("expected " + std::string(expected) + ", got the quoted string " + quote(v.text));
  }
}

int to_int(const Scalar& v, int lo, int hi) {
  require_plain(v, "an integer");
  long long n = 0;
  const char* end = v.text.data() + v.text.size();
  const auto [ptr, ec] = std::from_chars(v.text.data(), end, n);
  if (v.text.empty() || ptr != end || (ec != std::errc() && ec != std::errc::result_out_of_range)) {
    fail("expected an integer, got " + quote(v.text));
  }
  if (ec == std::errc::result_out_of_range || n < lo || n > hi) {
    fail("must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " +
         std::string(v.text));
  }
  return static_cast<int>(n);
}

bool to_bool(const Scalar& v) {
  require_plain(v, "true or false");
  // The YAML 1.2 core schema spellings; yes/no/on/off are YAML 1.1 and ambiguous.
  if (v.text == "true" || v.text == "True" || v.text == "TRUE") return true;
  if (v.text == "false" || v.text == "False" || v.text == "FALSE") return false;
  fail("expected true or false, got " + quote(v.text));
}

double to_fraction(const Scalar& v) {
  require_plain(v, "a number");
  double x = 0;
  const char* end = v.text.data() + v.text.size();
  const auto [ptr, ec] = std::from_chars(v.text.data(), end, x);
  if (v.text.empty() || ptr != end || ec != std::errc() || !std::isfinite(x)) {
    fail("expected a number, got " + quote(v.text));
  }
  if (!(x > 0 && x <= 1)) fail("must be in (0, 1], got " + std::string(v.text));
  return x;
}

// The logger's own parsers (base/log.h), so the file, the flags and the
// children's command lines accept exactly the same names.
std::string to_log_level(const Scalar& v) {
  try {
    parse_log_level(v.text);
  } catch (const std::invalid_argument&) {
    fail("expected one of debug, info, warn, error, got " + quote(v.text));
  }
  return std::string(v.text);
}

std::string to_log_format(const Scalar& v) {
  try {
    parse_log_format(v.text);
  } catch (const std::invalid_argument&) {
    fail("expected logfmt or json, got " + quote(v.text));
  }
  return std::string(v.text);
}

// Checked with the HTTP server's own parser (listen_address.h), so a typo
// fails --check-config, not the bind at start-up.
std::string to_listen_address(const Scalar& v) {
  parse_listen_address(v.text);
  return std::string(v.text);
}

Duration to_duration(const Scalar& v) { return parse_duration(v.text); }

// Every sweep reads every port of the fabric; below this a "1ms" typo (for
// "1m") would have the daemon hammer switch management CPUs back to back.
constexpr Duration kMinSweepInterval{100};

Duration to_sweep_interval(const Scalar& v) {
  const Duration d = to_duration(v);
  if (d < kMinSweepInterval) {
    fail("must be at least " + format_duration(kMinSweepInterval) +
         " (every sweep reads every port of the fabric), got " + std::string(v.text));
  }
  return d;
}

Duration to_duration_within(const Scalar& v, Duration lo, Duration hi) {
  const Duration d = to_duration(v);
  if (d < lo || d > hi) {
    fail("must be between " + format_duration(lo) + " and " + format_duration(hi) + ", got " +
         std::string(v.text));
  }
  return d;
}

// An absolute path of its own: "/" is the landing page and "/-/" the health
// endpoints.
std::string to_telemetry_path(const Scalar& v) {
  const std::string_view p = v.text;
  if (p.size() < 2 || p.front() != '/' || p.starts_with("/-/") ||
      p.find_first_of(" ?#") != std::string_view::npos) {
    fail("expected an absolute path such as \"/metrics\" (not \"/\" or under \"/-/\"), got " +
         quote(p));
  }
  return std::string(p);
}

// An absolute directory, or "" (events not kept): a relative one would
// depend on the working directory systemd happens to give.
std::string to_state_directory(const Scalar& v) {
  const std::string_view p = v.text;
  if (!p.empty() && p.front() != '/') {
    fail(
        "expected an absolute directory such as \"/var/lib/ibfabric_exporter\" (or \"\" to keep "
        "no state), got " +
        quote(p));
  }
  std::string d(p);
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  return d;
}

std::string to_job_source(const Scalar& v) {
  if (v.text == "none" || v.text == "slurmrestd" || v.text == "squeue") return std::string(v.text);
  fail("expected none, slurmrestd or squeue, got " + quote(v.text));
}

// What jobs/slurmrestd_client.cpp connects to: the same split.
std::string to_job_url(const Scalar& v) {
  const std::string_view u = v.text;
  if (u.empty()) return {};
  if (u.starts_with("unix://")) {
    if (u.size() < 9 || u[7] != '/') fail("expected unix:///absolute/path, got " + quote(u));
    return std::string(u);
  }
  const std::size_t scheme = u.starts_with("http://") ? 7 : u.starts_with("https://") ? 8 : 0;
  if (scheme == 0) {
    fail("expected unix:///path, http://host:port or https://host:port, got " + quote(u));
  }
  const std::string_view rest = u.substr(scheme);
  const std::size_t colon = rest.rfind(':');
  const bool has_port = colon != std::string_view::npos && colon + 1 < rest.size() &&
                        rest.find('/') == std::string_view::npos;
  if (!has_port || colon == 0)
    fail("expected " + std::string(u.substr(0, scheme)) + "host:port (no path), got " + quote(u));
  to_int(Scalar{rest.substr(colon + 1), true}, 1, 65535);
  return std::string(u);
}

// A path segment of the URL: "v0.0.38", never "/" or "..".
std::string to_api_version(const Scalar& v) {
  const std::string_view a = v.text;
  const bool ok = a.size() >= 2 && a.front() == 'v' && a.find("..") == std::string_view::npos &&
                  std::all_of(a.begin() + 1, a.end(),
                              [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
  if (!ok) fail("expected a version such as v0.0.38, got " + quote(a));
  return std::string(a);
}

// Sent as an HTTP header value: printable ASCII only.
std::string to_header_value(const Scalar& v) {
  if (!std::all_of(v.text.begin(), v.text.end(), [](char c) { return c > ' ' && c < 0x7f; })) {
    fail("expected a user name (printable ASCII, no spaces), got " + quote(v.text));
  }
  return std::string(v.text);
}

std::string to_absolute_path(const Scalar& v) {
  if (v.text.empty() || v.text.front() != '/')
    fail("expected an absolute path, got " + quote(v.text));
  return std::string(v.text);
}

std::string to_host_regex(const Scalar& v) {
  std::regex re;
  try {
    re = compile_user_regex(std::string(v.text));
  } catch (const UserRegexError& e) {
    fail(e.what());
  }
  if (re.mark_count() < 1) fail("needs a capture group (the host part), got " + quote(v.text));
  return std::string(v.text);
}

struct Key {
  std::string_view name;
  void (*set)(Config&, const Scalar&);
  std::string (*get)(const Config&);
};

std::string bool_text(bool b) { return b ? "true" : "false"; }

// Every key of the file, by dotted name. Ranges are the documented ones in
// config/ibfabric_exporter.yaml.
const std::array<Key, 71> kKeys{{
    {"listen_address", [](Config& c, const Scalar& v) { c.listen_address = to_listen_address(v); },
     [](const Config& c) { return c.listen_address; }},
    {"telemetry_path", [](Config& c, const Scalar& v) { c.telemetry_path = to_telemetry_path(v); },
     [](const Config& c) { return c.telemetry_path; }},
    {"web.header_timeout",
     [](Config& c, const Scalar& v) {
       c.web.header_timeout = to_duration_within(v, Duration(100), std::chrono::minutes(5));
     },
     [](const Config& c) { return format_duration(c.web.header_timeout); }},
    {"web.idle_timeout",
     [](Config& c, const Scalar& v) {
       c.web.idle_timeout = to_duration_within(v, Duration(100), std::chrono::hours(1));
     },
     [](const Config& c) { return format_duration(c.web.idle_timeout); }},
    {"web.max_connections",
     [](Config& c, const Scalar& v) { c.web.max_connections = to_int(v, 0, 1 << 20); },
     [](const Config& c) { return std::to_string(c.web.max_connections); }},
    {"web.max_connections_per_client",
     [](Config& c, const Scalar& v) { c.web.max_connections_per_client = to_int(v, 0, 1 << 20); },
     [](const Config& c) { return std::to_string(c.web.max_connections_per_client); }},
    {"sweep_interval", [](Config& c, const Scalar& v) { c.sweep_interval = to_sweep_interval(v); },
     [](const Config& c) { return format_duration(c.sweep_interval); }},
    {"ca", [](Config& c, const Scalar& v) { c.ca = std::string(v.text); },
     [](const Config& c) { return c.ca; }},
    // umad port numbers are 8 bits and 255 is reserved.
    {"ca_port", [](Config& c, const Scalar& v) { c.ca_port = to_int(v, 0, 254); },
     [](const Config& c) { return std::to_string(c.ca_port); }},
    {"node_name_map_file", [](Config& c, const Scalar& v) { c.node_name_map_file = v.text; },
     [](const Config& c) { return c.node_name_map_file; }},
    {"state_directory",
     [](Config& c, const Scalar& v) { c.state_directory = to_state_directory(v); },
     [](const Config& c) { return c.state_directory; }},
    {"log_level", [](Config& c, const Scalar& v) { c.log_level = to_log_level(v); },
     [](const Config& c) { return c.log_level; }},
    {"log_format", [](Config& c, const Scalar& v) { c.log_format = to_log_format(v); },
     [](const Config& c) { return c.log_format; }},
    {"mad.global_inflight",
     [](Config& c, const Scalar& v) { c.mad.global_inflight = to_int(v, 1, 4096); },
     [](const Config& c) { return std::to_string(c.mad.global_inflight); }},
    {"mad.per_node_inflight",
     [](Config& c, const Scalar& v) { c.mad.per_node_inflight = to_int(v, 1, 64); },
     [](const Config& c) { return std::to_string(c.mad.per_node_inflight); }},
    {"mad.timeout", [](Config& c, const Scalar& v) { c.mad.timeout = to_duration(v); },
     [](const Config& c) { return format_duration(c.mad.timeout); }},
    {"mad.retries", [](Config& c, const Scalar& v) { c.mad.retries = to_int(v, 0, 10); },
     [](const Config& c) { return std::to_string(c.mad.retries); }},
    {"mad.max_mads_per_second",
     [](Config& c, const Scalar& v) {
       c.mad.max_mads_per_second = to_int(v, 0, std::numeric_limits<int>::max());
     },
     [](const Config& c) { return std::to_string(c.mad.max_mads_per_second); }},
    {"discovery.interval",
     [](Config& c, const Scalar& v) { c.discovery.interval = to_duration(v); },
     [](const Config& c) { return format_duration(c.discovery.interval); }},
    {"discovery.max_smps",
     [](Config& c, const Scalar& v) { c.discovery.max_smps = to_int(v, 1, 256); },
     [](const Config& c) { return std::to_string(c.discovery.max_smps); }},
    {"discovery.timeout", [](Config& c, const Scalar& v) { c.discovery.timeout = to_duration(v); },
     [](const Config& c) { return format_duration(c.discovery.timeout); }},
    {"discovery.retries",
     [](Config& c, const Scalar& v) { c.discovery.retries = to_int(v, 0, 10); },
     [](const Config& c) { return std::to_string(c.discovery.retries); }},
    {"discovery.forget_after",
     [](Config& c, const Scalar& v) { c.discovery.forget_after = to_duration(v); },
     [](const Config& c) { return format_duration(c.discovery.forget_after); }},
    {"discovery.forget_after_discoveries",
     [](Config& c, const Scalar& v) { c.discovery.forget_after_discoveries = to_int(v, 1, 1000); },
     [](const Config& c) { return std::to_string(c.discovery.forget_after_discoveries); }},
    {"counters.clear_on_threshold",
     [](Config& c, const Scalar& v) { c.counters.clear_on_threshold = to_bool(v); },
     [](const Config& c) { return bool_text(c.counters.clear_on_threshold); }},
    {"counters.clear_threshold",
     [](Config& c, const Scalar& v) { c.counters.clear_threshold = to_fraction(v); },
     [](const Config& c) {
       std::array<char, 32> buf{};  // shortest text that reads back as the same double
       const auto result =
           std::to_chars(buf.data(), buf.data() + buf.size(), c.counters.clear_threshold);
       return std::string(buf.data(), result.ptr);
     }},
    {"counters.include_hcas",
     [](Config& c, const Scalar& v) { c.counters.include_hcas = to_bool(v); },
     [](const Config& c) { return bool_text(c.counters.include_hcas); }},
    {"counters.include_switch_port0",
     [](Config& c, const Scalar& v) { c.counters.include_switch_port0 = to_bool(v); },
     [](const Config& c) { return bool_text(c.counters.include_switch_port0); }},
    {"counters.probe_sm_and_local_ports",
     [](Config& c, const Scalar& v) { c.counters.probe_sm_and_local_ports = to_bool(v); },
     [](const Config& c) { return bool_text(c.counters.probe_sm_and_local_ports); }},
    {"counters.error_details",
     [](Config& c, const Scalar& v) { c.counters.error_details = to_bool(v); },
     [](const Config& c) { return bool_text(c.counters.error_details); }},
    {"counters.vl_transmit_wait",
     [](Config& c, const Scalar& v) { c.counters.vl_transmit_wait = to_bool(v); },
     [](const Config& c) { return bool_text(c.counters.vl_transmit_wait); }},
    {"counters.congestion_control",
     [](Config& c, const Scalar& v) { c.counters.congestion_control = to_bool(v); },
     [](const Config& c) { return bool_text(c.counters.congestion_control); }},
    {"sharding.count", [](Config& c, const Scalar& v) { c.sharding.count = to_int(v, 1, 1024); },
     [](const Config& c) { return std::to_string(c.sharding.count); }},
    {"sharding.index", [](Config& c, const Scalar& v) { c.sharding.index = to_int(v, 0, 1023); },
     [](const Config& c) { return std::to_string(c.sharding.index); }},
    {"export.port_counters",
     [](Config& c, const Scalar& v) { c.exporting.port_counters = to_bool(v); },
     [](const Config& c) { return bool_text(c.exporting.port_counters); }},
    {"export.hca_port_counters",
     [](Config& c, const Scalar& v) { c.exporting.hca_port_counters = to_bool(v); },
     [](const Config& c) { return bool_text(c.exporting.hca_port_counters); }},
    {"export.error_counters",
     [](Config& c, const Scalar& v) { c.exporting.error_counters = to_bool(v); },
     [](const Config& c) { return bool_text(c.exporting.error_counters); }},
    {"export.traffic_counters",
     [](Config& c, const Scalar& v) { c.exporting.traffic_counters = to_bool(v); },
     [](const Config& c) { return bool_text(c.exporting.traffic_counters); }},
    {"export.port_scores", [](Config& c, const Scalar& v) { c.exporting.port_scores = to_bool(v); },
     [](const Config& c) { return bool_text(c.exporting.port_scores); }},
    {"export.zero_error_counters",
     [](Config& c, const Scalar& v) { c.exporting.zero_error_counters = to_bool(v); },
     [](const Config& c) { return bool_text(c.exporting.zero_error_counters); }},
    {"export.raw_transmit_wait",
     [](Config& c, const Scalar& v) { c.exporting.raw_transmit_wait = to_bool(v); },
     [](const Config& c) { return bool_text(c.exporting.raw_transmit_wait); }},
    {"jobs.source", [](Config& c, const Scalar& v) { c.jobs.source = to_job_source(v); },
     [](const Config& c) { return c.jobs.source; }},
    {"jobs.url", [](Config& c, const Scalar& v) { c.jobs.url = to_job_url(v); },
     [](const Config& c) { return c.jobs.url; }},
    {"jobs.api_version", [](Config& c, const Scalar& v) { c.jobs.api_version = to_api_version(v); },
     [](const Config& c) { return c.jobs.api_version; }},
    {"jobs.token_file", [](Config& c, const Scalar& v) { c.jobs.token_file = v.text; },
     [](const Config& c) { return c.jobs.token_file; }},
    {"jobs.user_name", [](Config& c, const Scalar& v) { c.jobs.user_name = to_header_value(v); },
     [](const Config& c) { return c.jobs.user_name; }},
    {"jobs.squeue_command",
     [](Config& c, const Scalar& v) { c.jobs.squeue_command = to_absolute_path(v); },
     [](const Config& c) { return c.jobs.squeue_command; }},
    {"jobs.poll_interval",
     [](Config& c, const Scalar& v) {
       c.jobs.poll_interval = to_duration_within(v, std::chrono::seconds(1), std::chrono::hours(1));
     },
     [](const Config& c) { return format_duration(c.jobs.poll_interval); }},
    {"jobs.timeout",
     [](Config& c, const Scalar& v) {
       c.jobs.timeout = to_duration_within(v, Duration(100), std::chrono::minutes(1));
     },
     [](const Config& c) { return format_duration(c.jobs.timeout); }},
    {"jobs.grace_period",
     [](Config& c, const Scalar& v) {
       c.jobs.grace_period = to_duration_within(v, std::chrono::seconds(1), std::chrono::hours(24));
     },
     [](const Config& c) { return format_duration(c.jobs.grace_period); }},
    {"jobs.max_jobs", [](Config& c, const Scalar& v) { c.jobs.max_jobs = to_int(v, 1, 100000); },
     [](const Config& c) { return std::to_string(c.jobs.max_jobs); }},
    {"jobs.host_regex", [](Config& c, const Scalar& v) { c.jobs.host_regex = to_host_regex(v); },
     [](const Config& c) { return c.jobs.host_regex; }},
    {"jobs.host_map", [](Config& c, const Scalar& v) { c.jobs.host_map = v.text; },
     [](const Config& c) { return c.jobs.host_map; }},
    {"history.recent_window",
     [](Config& c, const Scalar& v) {
       c.history.recent_window =
           to_duration_within(v, std::chrono::minutes(1), std::chrono::hours(24));
     },
     [](const Config& c) { return format_duration(c.history.recent_window); }},
    {"history.coarse_window",
     [](Config& c, const Scalar& v) {
       c.history.coarse_window =
           to_duration_within(v, std::chrono::minutes(1), std::chrono::hours(24 * 31));
     },
     [](const Config& c) { return format_duration(c.history.coarse_window); }},
    {"history.coarse_step",
     [](Config& c, const Scalar& v) {
       c.history.coarse_step =
           to_duration_within(v, std::chrono::seconds(10), std::chrono::hours(1));
     },
     [](const Config& c) { return format_duration(c.history.coarse_step); }},
    {"history.max_memory_mb",
     [](Config& c, const Scalar& v) { c.history.max_memory_mb = to_int(v, 1, 4096); },
     [](const Config& c) { return std::to_string(c.history.max_memory_mb); }},
    {"history.save_interval",
     [](Config& c, const Scalar& v) {
       c.history.save_interval =
           to_duration_within(v, std::chrono::seconds(10), std::chrono::hours(1));
     },
     [](const Config& c) { return format_duration(c.history.save_interval); }},
    {"routes.enabled", [](Config& c, const Scalar& v) { c.routes.enabled = to_bool(v); },
     [](const Config& c) { return bool_text(c.routes.enabled); }},
    // At least 10/s, so that a table is ever read whole; at most what a
    // MAD worker sends at all (~1M/s), beyond which the cap means nothing.
    {"routes.smps_per_second",
     [](Config& c, const Scalar& v) { c.routes.smps_per_second = to_int(v, 10, 1000000); },
     [](const Config& c) { return std::to_string(c.routes.smps_per_second); }},
    {"routes.reread_interval",
     [](Config& c, const Scalar& v) {
       c.routes.reread_interval =
           to_duration_within(v, std::chrono::seconds(1), std::chrono::hours(24));
     },
     [](const Config& c) { return format_duration(c.routes.reread_interval); }},
    {"nodes.recover_after",
     [](Config& c, const Scalar& v) {
       c.nodes.recover_after =
           to_duration_within(v, std::chrono::seconds(1), std::chrono::hours(24));
     },
     [](const Config& c) { return format_duration(c.nodes.recover_after); }},
    {"nodes.incident_share",
     [](Config& c, const Scalar& v) { c.nodes.incident_share = to_fraction(v); },
     [](const Config& c) {
       std::array<char, 32> buf{};
       const auto r = std::to_chars(buf.data(), buf.data() + buf.size(), c.nodes.incident_share);
       return std::string(buf.data(), r.ptr);
     }},
    {"nodes.incident_min_hosts",
     [](Config& c, const Scalar& v) { c.nodes.incident_min_hosts = to_int(v, 1, 1000000); },
     [](const Config& c) { return std::to_string(c.nodes.incident_min_hosts); }},
    {"nodes.incident_window",
     [](Config& c, const Scalar& v) {
       c.nodes.incident_window =
           to_duration_within(v, std::chrono::seconds(1), std::chrono::hours(1));
     },
     [](const Config& c) { return format_duration(c.nodes.incident_window); }},
    {"nodes.stale_after",
     [](Config& c, const Scalar& v) {
       c.nodes.stale_after = to_duration_within(v, std::chrono::seconds(1), std::chrono::hours(1));
     },
     [](const Config& c) { return format_duration(c.nodes.stale_after); }},
    {"receipts.enabled", [](Config& c, const Scalar& v) { c.receipts.enabled = to_bool(v); },
     [](const Config& c) { return bool_text(c.receipts.enabled); }},
    // At most 10M receipts: about 1 KB each in memory (docs/receipts.md).
    {"receipts.keep_count",
     [](Config& c, const Scalar& v) { c.receipts.keep_count = to_int(v, 1, 10000000); },
     [](const Config& c) { return std::to_string(c.receipts.keep_count); }},
    {"receipts.keep_age",
     [](Config& c, const Scalar& v) {
       c.receipts.keep_age =
           to_duration_within(v, std::chrono::hours(1), std::chrono::hours(24 * 3650));
     },
     [](const Config& c) { return format_duration(c.receipts.keep_age); }},
    {"receipts.clean_stall_ratio",
     [](Config& c, const Scalar& v) { c.receipts.clean_stall_ratio = to_fraction(v); },
     [](const Config& c) {
       std::array<char, 32> buf{};
       const auto r =
           std::to_chars(buf.data(), buf.data() + buf.size(), c.receipts.clean_stall_ratio);
       return std::string(buf.data(), r.ptr);
     }},
    // A source down this long is no outage but an end: at least a minute
    // (a restart of slurmrestd), at most a week.
    {"receipts.unknown_end_after",
     [](Config& c, const Scalar& v) {
       c.receipts.unknown_end_after =
           to_duration_within(v, std::chrono::minutes(1), std::chrono::hours(24 * 7));
     },
     [](const Config& c) { return format_duration(c.receipts.unknown_end_after); }},
}};

const Key* find_key(std::string_view name) {
  const auto it =
      std::find_if(kKeys.begin(), kKeys.end(), [&](const Key& k) { return k.name == name; });
  return it == kKeys.end() ? nullptr : &*it;
}

bool is_section(std::string_view name) {
  return std::any_of(kKeys.begin(), kKeys.end(), [&](const Key& k) {
    return k.name.size() > name.size() && k.name.starts_with(name) && k.name[name.size()] == '.';
  });
}

using yaml::describe;
using yaml::line_of;

// Walks the YAML tree against kKeys, remembering where each key was set so
// that checks across keys can point at a line too.
class YamlLoader {
 public:
  explicit YamlLoader(std::string source) : source_(std::move(source)) {}

  Config load(const YAML::Node& doc) {
    Config config;
    if (!doc.IsDefined() || doc.IsNull()) return config;  // empty file: all defaults
    if (!doc.IsMap()) {
      fail_at(line_of(doc, 1), "(top level)",
              "expected a mapping of keys to values, got " + describe(doc));
    }
    walk(doc, "", config);
    check_inflight(config);
    check_jobs(config);
    if (config.sharding.index >= config.sharding.count) {
      const auto it = lines_.find("sharding.index");
      fail_at(it == lines_.end() ? 1 : it->second, "sharding.index",
              "must be below sharding.count (" + std::to_string(config.sharding.count) + ")");
    }
    return config;
  }

 private:
  [[noreturn]] void fail_at(int line, std::string_view key, const std::string& what) const {
    fail(source_ + ":" + std::to_string(line) + ": " + printable(key) + ": " + what);
  }

  void walk(const YAML::Node& map, const std::string& prefix, Config& config) {
    const int map_line = line_of(map, 1);
    for (const auto& entry : map) {
      const int line = line_of(entry.first, map_line);
      if (!entry.first.IsScalar()) fail_at(line, prefix + "?", "keys must be plain names");
      const std::string& name = entry.first.Scalar();
      const std::string key = prefix + name;
      // The analysis sections have their own parser (analysis/analysis_config.h),
      // which main hands the same parsed document.
      if (prefix.empty() && (name == "topology" || name == "scores" || name == "links")) continue;
      // A dot inside a name would otherwise reach the nested keys by another spelling.
      const bool known = name.find('.') == std::string::npos && (is_section(key) || find_key(key));
      if (!known) fail_at(line, key, "unknown key");
      if (const auto [it, inserted] = lines_.emplace(key, line); !inserted) {
        fail_at(line, key, "duplicate key (first set on line " + std::to_string(it->second) + ")");
      }
      const YAML::Node& value = entry.second;
      if (is_section(key)) {
        if (value.IsNull()) continue;  // every sub-key commented out: defaults
        if (!value.IsMap()) {
          fail_at(line, key, "expected a mapping of keys, got " + describe(value));
        }
        walk(value, key + ".", config);
        continue;
      }
      if (!value.IsScalar()) {
        // A null value has no useful mark of its own; the key's line is the one to fix.
        fail_at(line, key,
                value.IsNull() ? "missing value (write \"\" for an empty string)"
                               : "expected a single value, got " + describe(value));
      }
      try {
        find_key(key)->set(config, Scalar{value.Scalar(), value.Tag() == "?"});
      } catch (const ConfigError& e) {
        fail_at(line_of(value, line), key, e.what());
      }
    }
  }

  void check_inflight(const Config& config) const {
    if (config.mad.per_node_inflight <= config.mad.global_inflight) return;
    // The defaults agree, so the file set at least one of the two; blame
    // per_node_inflight when it was set.
    const std::string key =
        lines_.contains("mad.per_node_inflight") ? "mad.per_node_inflight" : "mad.global_inflight";
    const auto it = lines_.find(key);
    fail_at(it == lines_.end() ? 1 : it->second, key,
            "per_node_inflight (" + std::to_string(config.mad.per_node_inflight) +
                ") must not exceed global_inflight (" + std::to_string(config.mad.global_inflight) +
                ")");
  }

  // The keys a job source needs (docs/jobs.md).
  void check_jobs(const Config& config) const {
    const JobsConfig& j = config.jobs;
    auto line = [&](const std::string& key) {
      const auto it = lines_.find(key);
      return it == lines_.end() ? (lines_.contains("jobs.source") ? lines_.at("jobs.source") : 1)
                                : it->second;
    };
    if (j.source == "slurmrestd" && j.url.empty()) {
      fail_at(line("jobs.source"), "jobs.url", "source slurmrestd needs a url");
    }
    const bool http = j.url.starts_with("http");
    if (j.source == "slurmrestd" && http && (j.token_file.empty() || j.user_name.empty())) {
      fail_at(line("jobs.url"), "jobs.token_file",
              "an http(s) url needs token_file and user_name (slurmrestd's rest_auth/jwt)");
    }
  }

  std::string source_;
  std::map<std::string, int, std::less<>> lines_;  // dotted key -> line it was set on
};

}  // namespace

Duration parse_duration(std::string_view text) {
  const auto bad = [&](const std::string& why) {
    return ConfigError("invalid duration " + quote(text) + ": " + why);
  };
  if (text.empty()) throw bad("empty");
  if (text.front() == '-') throw bad("negative durations are not allowed");
  std::int64_t total = 0;
  std::size_t next_unit = 0;  // index of the largest unit still allowed
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::uint64_t n = 0;
    const char* begin = text.data() + pos;
    const auto [ptr, ec] = std::from_chars(begin, text.data() + text.size(), n);
    if (ptr == begin) {
      throw bad(is_letter(text[pos]) ? "expected a number before " + quote(text.substr(pos))
                                     : "unexpected character " + quote(text.substr(pos, 1)));
    }
    if (ec == std::errc::result_out_of_range) throw bad("too large");
    pos = static_cast<std::size_t>(ptr - text.data());
    if (pos < text.size() && text[pos] == '.') {
      throw bad("fractions are not supported; combine units instead, e.g. 1m30s");
    }
    std::size_t unit_end = pos;
    while (unit_end < text.size() && is_letter(text[unit_end])) ++unit_end;
    const std::string_view unit = text.substr(pos, unit_end - pos);
    if (unit.empty()) {
      throw bad(pos == text.size() ? "missing unit (ms, s, m, h, d, w or y)"
                                   : "unexpected character " + quote(text.substr(pos, 1)));
    }
    const auto it = std::find_if(kDurationUnits.begin(), kDurationUnits.end(),
                                 [&](const DurationUnit& u) { return u.name == unit; });
    if (it == kDurationUnits.end())
      throw bad("unknown unit " + quote(unit) + " (use ms, s, m, h, d, w or y)");
    const auto index = static_cast<std::size_t>(it - kDurationUnits.begin());
    if (index < next_unit) throw bad("units must go from largest to smallest, each at most once");
    next_unit = index + 1;
    constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
    if (n > static_cast<std::uint64_t>(kMax / it->ms)) throw bad("too large");
    const auto part = static_cast<std::int64_t>(n) * it->ms;
    if (total > kMax - part) throw bad("too large");
    total += part;
    pos = unit_end;
  }
  if (total == 0) throw bad("must be greater than zero");
  return Duration(total);
}

std::string format_duration(Duration duration) {
  std::int64_t rest = duration.count();
  if (rest <= 0) return "0s";
  std::string out;
  for (const DurationUnit& unit : kDurationUnits) {
    if (rest >= unit.ms) {
      out += std::to_string(rest / unit.ms) + std::string(unit.name);
      rest %= unit.ms;
    }
  }
  return out;
}

std::vector<std::string_view> config_keys() {
  std::vector<std::string_view> keys;
  keys.reserve(kKeys.size());
  for (const Key& k : kKeys) keys.push_back(k.name);
  return keys;
}

void set_config_value(Config& config, std::string_view dotted_key, std::string_view text) {
  const Key* key = find_key(dotted_key);
  if (key == nullptr) fail("unknown key " + quote(dotted_key));
  key->set(config, Scalar{text, true});
}

namespace {

// Keeps `now`'s member at `was`'s; true if it differed.
template <auto Member>
bool keep_member(const Config& was, Config& now) {
  if (now.*Member == was.*Member) return false;
  now.*Member = was.*Member;
  return true;
}

struct RestartOnly {
  std::string_view name;
  bool (*keep)(const Config& was, Config& now);
};

// The one list restart_only_settings() and keep_restart_only() read.
constexpr std::array<RestartOnly, 7> kRestartOnly{{
    {"listen_address", keep_member<&Config::listen_address>},
    {"telemetry_path", keep_member<&Config::telemetry_path>},
    {"web", keep_member<&Config::web>},
    {"ca", keep_member<&Config::ca>},
    {"ca_port", keep_member<&Config::ca_port>},
    {"state_directory", keep_member<&Config::state_directory>},
    {"history", keep_member<&Config::history>},
}};

}  // namespace

std::vector<std::string_view> restart_only_settings() {
  std::vector<std::string_view> names;
  names.reserve(kRestartOnly.size());
  for (const RestartOnly& r : kRestartOnly) names.push_back(r.name);
  return names;
}

std::string_view restart_only_setting_of(std::string_view dotted_key) {
  for (const RestartOnly& r : kRestartOnly) {
    const std::string_view s = r.name;
    if (dotted_key == s || (dotted_key.size() > s.size() && dotted_key.substr(0, s.size()) == s &&
                            dotted_key[s.size()] == '.')) {
      return s;
    }
  }
  return {};
}

std::vector<std::string> keep_restart_only(const Config& running, Config& next) {
  std::vector<std::string> differed;
  for (const RestartOnly& r : kRestartOnly) {
    if (r.keep(running, next)) differed.emplace_back(r.name);
  }
  return differed;
}

std::string config_value_text(const Config& config, std::string_view dotted_key) {
  const Key* key = find_key(dotted_key);
  if (key == nullptr) fail("unknown key " + quote(dotted_key));
  return key->get(config);
}

Config parse_config_document(const YAML::Node& document, const std::string& source_name) {
  return YamlLoader(source_name).load(document);
}

Config parse_config_yaml(std::string_view yaml_text, const std::string& source_name) {
  return parse_config_document(yaml::load_document(yaml_text, source_name), source_name);
}

Config load_config_file(const std::string& path) {
  return parse_config_document(yaml::load_document_file(path), path);
}

}  // namespace ibfx
