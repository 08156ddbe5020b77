// The PromQL queries the docs show, run on a real Prometheus and held to
// what their sentence says they return (issue #45). test/docs_promql.py
// reads each query and its sentence from the page (the comment on its line
// or the one above it, else the paragraph before its block), so a test
// runs the page's own text: a query edited in the doc is the query tested.
// A test lists, per sentence, the property the sentence claims; a query of
// its pages with no such entry fails, and so does an entry whose sentence
// the page no longer has.
#pragma once

#include <catch2/catch.hpp>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "loopback_service.h"
#include "prometheus_fixture.h"
#include "shell.h"
#include "test/support/mini_json.h"

namespace ibfx::test {

struct DocQuery {
  std::string file;  // docs/dashboards.md
  int line = 0;
  std::string query;
  std::string says;  // the doc's sentence for it
};

// Every PromQL query in README.md and docs/*.md, as test/docs_promql.py
// --list finds them.
inline std::vector<DocQuery> doc_queries() {
  const std::string source = IBFX_SOURCE_DIR;
  const Shell listed = shell("python3 " + source + "/test/docs_promql.py " + source + " --list");
  REQUIRE(listed.exit_code == 0);
  std::vector<DocQuery> out;
  for (const Json& q : parse_json(listed.out).array) {
    out.push_back(
        {q["file"].str(), static_cast<int>(q["line"].number), q["query"].str(), q["says"].str()});
  }
  REQUIRE(out.size() >= 10);
  return out;
}

// What one documented query's sentence claims, checked on its result.
struct DocClaim {
  std::string file;
  std::string says;  // the sentence, exactly as docs_promql.py reports it
  // Text of the query replaced before it runs (the doc's example job id by
  // the test's job): each must be in the query.
  std::map<std::string, std::string> replace;
  std::function<void(const std::vector<Sample>&)> check;
};

// A query's result, one sample a line, for failure messages.
inline std::string doc_listing(const std::vector<Sample>& found) {
  std::string out;
  for (const Sample& s : found) {
    out += "{";
    for (const auto& [k, v] : s.labels) out += k + "=\"" + v + "\",";
    out += "} " + std::to_string(s.value) + "\n";
  }
  return out.empty() ? "(no series)\n" : out;
}

// The label's value, "" when the sample has none.
inline std::string doc_label(const Sample& s, const std::string& name) {
  const auto it = s.labels.find(name);
  return it == s.labels.end() ? std::string() : it->second;
}

// Runs every documented query of `files` and checks its claim; each query
// of those pages has one claim and each claim one query.
inline void check_doc_claims(const QueryService& prom, const std::set<std::string>& files,
                             const std::vector<DocClaim>& claims) {
  std::set<std::size_t> used;
  for (const DocQuery& q : doc_queries()) {
    if (files.count(q.file) == 0) continue;
    INFO(q.file << ":" << q.line << ": \"" << q.says << "\": " << q.query);
    std::size_t k = 0;
    while (k < claims.size() && (claims[k].file != q.file || claims[k].says != q.says)) ++k;
    if (k == claims.size()) FAIL("no claim checked for this documented query: add one");
    used.insert(k);
    std::string query = q.query;
    for (const auto& [from, to] : claims[k].replace) {
      const auto at = query.find(from);
      REQUIRE(at != std::string::npos);
      query.replace(at, from.size(), to);
    }
    INFO("ran: " << query);
    const Json reply = prom.query(query);
    INFO(reply["error"].str());
    REQUIRE(reply["status"].str() == "success");
    const std::vector<Sample> found = samples(reply);
    INFO("result:\n" << doc_listing(found));
    claims[k].check(found);
  }
  for (std::size_t k = 0; k < claims.size(); ++k) {
    INFO(claims[k].file << ": \"" << claims[k].says << "\"");
    CHECK(used.count(k) == 1);  // the page no longer says it
  }
}

}  // namespace ibfx::test
