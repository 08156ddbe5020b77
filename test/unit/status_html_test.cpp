// The fabric page: heatmap cells with tooltips and links, tables, legend,
// refresh, and hostile node names escaped in every context they appear in.
#include "views/status_html.h"

#include <catch2/catch.hpp>
#include <string>

#include "test/support/status_support.h"
#include "views/status_page_frame.h"

using namespace std::string_literals;

namespace ibfx {
namespace {

std::size_t count(const std::string& text, std::string_view what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Hostile names on the root's leaf (roots table, heatmap cell, tooltip,
// link), on a spine (hottest ports' far end...), on the root's far end and
// on the node not answering.
test::StatusFixture hostile_fixture() {
  const test::RailFabric probe = test::rail_fabric(
      {.rails = 2, .leaves_per_rail = 2, .hosts_per_leaf = 2, .spines_per_rail = 2, .cores = 1});
  return test::status_fixture({
      {probe.leaf[0][0], "<script>alert(1)</script>"},
      {probe.spine[0][0], "\"><img src=x onerror=alert(2)>"},
      {probe.hca[0][0], "</title><svg onload=alert(3)>]]>"},
      {probe.hca[1][1], "x'\0\x1b[31m\xFF\xE2\x80\xA8</td>"s},
  });
}

}  // namespace

TEST_CASE("the status page has the heatmap, tables, legend, links and refresh", "[status_html]") {
  const test::StatusFixture fx = test::status_fixture();
  const std::string html = render_status_html(build_status_model(*fx.snapshot));
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(test::unexpected_tag(html).empty());
  // The links at the top.
  for (const char* link : {"href=\"/metrics\"", "href=\"/top\"", "href=\"/events\"",
                           "href=\"/-/healthy\"", "href=\"/-/ready\"", "href=\"/status.json\""}) {
    CHECK(html.find(link) != std::string::npos);
  }
  CHECK(html.find("<noscript><meta http-equiv=\"refresh\" content=\"10\"></noscript>") !=
        std::string::npos);
  CHECK(html.find("data-refresh=\"10\"") != std::string::npos);
  CHECK(count(html, "<script>") == 1);
  CHECK(html.find(std::string(kStatusScript)) != std::string::npos);
  // One cell per switch, with the "name, worst port, W, U" tooltip and its link.
  CHECK(count(html, "<a href=\"/?node=spine-r0-0\"><title>") == 1);
  CHECK(html.find("<title>spine-r0-0, port 1, W 0.500, U 0.200</title>") != std::string::npos);
  CHECK(html.find(">50%</text>") != std::string::npos);
  CHECK(html.find("fill=\"" + stall_colour(0.5) + "\"") != std::string::npos);
  // The root's switch is outlined and says so in its tooltip.
  CHECK(html.find("<title>leaf-r0-0 (root of congestion), port 1, W 0.050, U 0.980</title>") !=
        std::string::npos);
  CHECK(count(html, "class=\"root\"") == 1);
  CHECK(html.find(">rail 0</text>") != std::string::npos);
  CHECK(html.find(">spine</text>") != std::string::npos);
  CHECK(html.find(">core</text>") != std::string::npos);
  CHECK(html.find("no data</text>") != std::string::npos);  // the legend
  // The roots table: the incast root first, with its far end.
  const auto roots = html.find("<table id=\"roots\">");
  REQUIRE(roots != std::string::npos);
  const auto first_row = html.find("<tr><td>", roots);
  const std::string row = html.substr(first_row, html.find("</tr>", first_row) - first_row);
  CHECK(row.find(">leaf-r0-0</a> port 1</td><td>leaf</td><td>incast</td>") != std::string::npos);
  CHECK(row.find("<td>host0 mlx5_0 port 1</td>") != std::string::npos);
  CHECK(html.find("<table id=\"hottest\">") != std::string::npos);
  CHECK(html.find("<table id=\"links\">") != std::string::npos);
  // Why it is degraded: trained 1x among 4x peers (the fixture's ends say
  // nothing of what they enable).
  CHECK(html.find(
            "<td>degraded: 50 Gb/s, below its peers&#39; 200 Gb/s</td><td>1x</td><td>HDR</td>") !=
        std::string::npos);
  CHECK(html.find("<table id=\"not-answering\">") != std::string::npos);
  CHECK(html.find("host1 mlx5_1") != std::string::npos);
  CHECK(html.find("Congestion events") != std::string::npos);
  CHECK(html.find("<table id=\"sweep\">") != std::string::npos);
  const std::size_t nodes = fx.snapshot->fabric->nodes.size();
  CHECK(html.find(std::to_string(nodes - 1) + " of " + std::to_string(nodes) + " swept") !=
        std::string::npos);
  CHECK(html.find(utc_time(1790000000.5)) != std::string::npos);
}

TEST_CASE("the status page shows events and jobs when the daemon has them", "[status_html]") {
  const test::StatusFixture fx = test::status_fixture();
  StatusModel m = build_status_model(*fx.snapshot);
  m.roots[0].jobs = std::vector<std::string>{"4242 <train>"};
  StatusEvent event = test::active_status_event();
  m.events = std::vector<StatusEvent>{event};
  event.jobs = {"1<x>"};
  event.jobs_truncated = true;
  m.events->push_back(event);
  const std::string html = render_status_html(m);
  CHECK(html.find("<td class=\"n\">7</td>") != std::string::npos);
  // An event's jobs link to their views (/?job=ID), the id alone in the URL.
  CHECK(html.find("<a href=\"/?job=4242\">4242</a>, <a href=\"/?job=4243\">4243</a></td>") !=
        std::string::npos);
  CHECK(html.find("<a href=\"/?job=1\">1&lt;x&gt;</a>, &hellip;</td>") != std::string::npos);
  CHECK(html.find("42 s</td>") != std::string::npos);
  CHECK(html.find("4242 &lt;train&gt;") != std::string::npos);
  CHECK(html.find("<table id=\"events\">") != std::string::npos);
  CHECK(test::unexpected_tag(html).empty());
}

TEST_CASE("the status page escapes hostile node names in every context", "[status_html]") {
  const test::StatusFixture fx = hostile_fixture();
  const std::string html = render_status_html(build_status_model(*fx.snapshot));
  INFO(test::unexpected_tag(html));
  CHECK(test::unexpected_tag(html).empty());
  CHECK(count(html, "<script>") == 1);
  CHECK(html.find("<img") == std::string::npos);
  CHECK(html.find("<svg onload") == std::string::npos);
  CHECK(html.find('\0') == std::string::npos);
  CHECK(html.find('\x1b') == std::string::npos);
  CHECK(html.find("\xE2\x80\xA8") != std::string::npos);  // valid text, shown as it is
  // Text and attribute contexts: character references.
  CHECK(html.find("&lt;script&gt;alert(1)&lt;/script&gt;</a> port 1") != std::string::npos);
  CHECK(html.find("<title>&lt;script&gt;alert(1)&lt;/script&gt; (root of congestion), port") !=
        std::string::npos);
  CHECK(html.find("&quot;&gt;&lt;img src=x onerror=alert(2)&gt;") != std::string::npos);
  CHECK(html.find("&lt;/title&gt;&lt;svg onload=alert(3)&gt;]]&gt;") != std::string::npos);
  CHECK(html.find("x&#39;\xEF\xBF\xBD\xEF\xBF\xBD[31m\xEF\xBF\xBD") != std::string::npos);
  // URLs: every reserved byte percent-encoded.
  CHECK(html.find("href=\"/?node=%3Cscript%3Ealert%281%29%3C%2Fscript%3E\"") != std::string::npos);
  CHECK(html.find("href=\"/?node=%22%3E%3Cimg%20src%3Dx%20onerror%3Dalert%282%29%3E\"") !=
        std::string::npos);
}

TEST_CASE("the status page lists unhealthy links, names escaped, worst first",
          "[status_html][links]") {
  test::StatusFixture fx = hostile_fixture();
  const std::string healthy = render_status_html(build_status_model(*fx.snapshot));
  CHECK(healthy.find("<h2>Links</h2>\n<p>None: no cable") != std::string::npos);
  fx.snapshot->links = test::unhealthy_links(fx);
  const std::string html = render_status_html(build_status_model(*fx.snapshot));
  INFO(test::unexpected_tag(html));
  CHECK(test::unexpected_tag(html).empty());
  const auto table = html.find("<table id=\"link-health\">");
  REQUIRE(table != std::string::npos);
  // The down link first (its far end gone: its GUID), then the BER error,
  // counted at host0's receiver: host0 first, then leaf-r0-0 as its far end.
  const auto down = html.find("0x000000000000dead port 1</td><td>down</td>", table);
  const auto ber = html.find(
      "&lt;/title&gt;&lt;svg onload=alert(3)&gt;]]&gt;</a> port 1</td>"
      "<td>ber_error</td>",
      table);
  CHECK(down != std::string::npos);
  CHECK(ber != std::string::npos);
  CHECK(down < ber);
  CHECK(html.find("3.0e-11", ber) < html.find("</tr>", ber));
  CHECK(html.find("&lt;script&gt;alert(1)&lt;/script&gt; port 1</td></tr>", ber) <
        html.find("</table>", ber));
  // The heatmap marks the switches at either end (leaf-r0-0, leaf-r0-1).
  CHECK(count(html, " (unhealthy link)") == 2);
  CHECK(count(html, "fill=\"#ff7f00\"") == 2);
  CHECK(count(healthy, " (unhealthy link)") == 0);
  // The root at leaf-r0-0 port 1 is on the ber_error cable: its cause says so.
  const auto roots = html.find("<table id=\"roots\">");
  REQUIRE(roots != std::string::npos);
  const auto cable = html.find("; its cable: ber_error</td>", roots);
  CHECK(cable < html.find("</table>", roots));
  CHECK(healthy.find("; its cable: ") == std::string::npos);
}

TEST_CASE("the status page lists a length outlier after the unhealthy links, says why",
          "[status_html][length]") {
  test::StatusFixture fx = test::status_fixture();
  fx.snapshot->links = test::length_outlier_links(fx);
  const std::string html = render_status_html(build_status_model(*fx.snapshot));
  const auto at = html.find("length_outlier: round trip 180 ns, its peers&#39; 95 ns");
  REQUIRE(at != std::string::npos);
  CHECK(html.find("ber_error") < at);
}

TEST_CASE("the status page before two sweeps says so", "[status_html]") {
  test::StatusFixture fx = test::status_fixture();
  fx.snapshot->analysis.result = {};
  const std::string html = render_status_html(build_status_model(*fx.snapshot));
  CHECK(html.find("No stall ratios yet") != std::string::npos);
  CHECK(html.find("None yet: scores need two sweeps") != std::string::npos);
  CHECK(test::unexpected_tag(html).empty());
}

}  // namespace ibfx
