// The query string of a scrape: /metrics?collect[]=ports&node=leaf-01,
// /top?n=20. One parser, in the daemon layer (not the HTTP server's job).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ibfx {

struct ScrapeQuery {
  std::vector<std::string> collect;  // collect[]= values, in order, repeatable
  std::vector<std::string> nodes;    // node= values (names or GUIDs), repeatable
  std::string n;                     // n= (the /top length), empty when absent
  std::string since;                 // since= (/events: Unix seconds), empty when absent
  // The status page's history (issue #35): /?at=, /status.json?at=, /?window=,
  // /?job=, /history.json?from=&to=&step=; empty when absent.
  std::string at, window, job, from, to, step;
  // /route?from=&from_port=&to=&to_port=&format=text (from and to above).
  std::string from_port, to_port, format;
  // /jobs?user=&since=&limit= (issue #44; since above).
  std::string user, limit;
  std::string error;  // non-empty: malformed (e.g. a bad %-escape)
};

// Parses the part of `target` after '?': '&'-separated key=value pairs,
// %-escapes and '+' decoded; `collect%5B%5D` is `collect[]`. Other keys are
// ignored, as node_exporter does.
ScrapeQuery parse_scrape_query(std::string_view target);

}  // namespace ibfx
