// A Slurm job's view: its worst stall over its lifetime, the roots whose
// trees held its ports, its leaves over time; hostile job names escaped;
// a job the history never saw has no page.
#include "views/history_job_view.h"

#include <catch2/catch.hpp>

#include "test/support/history_support.h"

namespace ibfx {

TEST_CASE("a job's view shows its stall over time and the roots that hurt it", "[history]") {
  auto h = std::make_shared<HistoryFrames>();
  const auto table = test::history_table(4);
  for (int k = 0; k < 30; ++k) {
    auto f = test::history_frame(1764720000 + 60 * k, {0.1, 0.2, 0.3, 0.4}, table);
    if (k >= 5) {
      f->jobs = {HistoryJob{4711, "<script>train</script>", "alice", k < 10 ? 0.6 : 0.05, {0, 2}}};
    }
    if (k >= 5 && k < 10) {
      PageRoot r = test::history_root(3, 7, 4.5);
      r.jobs = {"4711 <script>train</script> (alice)"};
      f->roots = {r};
    }
    h->frames.push_back(f);
  }
  const std::string page = render_job_html(h, 4711, "/metrics");
  REQUIRE_FALSE(page.empty());
  CHECK(page.find("<h1>Slurm job 4711 &lt;script&gt;train&lt;/script&gt; (alice)</h1>") !=
        std::string::npos);
  CHECK(page.find("<script>train") == std::string::npos);
  CHECK(page.find("Peak W 0.600 at 2025-12-03 00:05:00 UTC") != std::string::npos);
  CHECK(page.find("<table id=\"job-roots\">") != std::string::npos);
  CHECK(page.find("sw3 port 7</td><td>incast</td><td class=\"n\">4.50") != std::string::npos);
  CHECK(page.find("href=\"/?at=1764720300\"") != std::string::npos);  // first seen
  // Its two leaves, a row each, on the heatmap over time.
  CHECK(page.find("<text x=\"0\" y=\"28\">sw1</text>") != std::string::npos);
  CHECK(page.find(">sw3</text>") != std::string::npos);
  CHECK(page.find(">sw2</text>") == std::string::npos);
  CHECK(render_job_html(h, 4712, "/metrics").empty());
  // No link of the history had the job at an end.
  CHECK(page.find("<h2>Link conditions on its ports</h2>\n<p>None") != std::string::npos);

  std::string link;
  append_job_link(link, "4711 <b> (x)");
  CHECK(link == "<a href=\"/?job=4711\">4711 &lt;b&gt; (x)</a>");
  std::string plain;
  append_job_link(plain, "unknown");
  CHECK(plain == "unknown");
}

TEST_CASE("a job's view lists the link conditions on its ports and when they were seen",
          "[history]") {
  auto h = std::make_shared<HistoryFrames>();
  const auto table = test::history_table(4);
  for (int k = 0; k < 20; ++k) {
    auto f = test::history_frame(1764720000 + 60 * k, {0.1, 0.2, 0.3, 0.4}, table);
    f->jobs = {HistoryJob{4711, "train", "alice", 0.1, {0}}};
    // Its cable at sw1 port 3 erred from minute 4 to 8 and went down at
    // minute 12; another job's cable at sw2 was degraded all along.
    PageLink mine = test::history_link(1, 3, k < 12 ? "ber_error" : "down", 1764720240);
    mine.remote.name = "<img src=x> mlx5_0";
    mine.jobs = {"4711 train (alice)", "4800 eval (bob)"};
    PageLink theirs = test::history_link(2, 5, "degraded", 1764720000);
    theirs.jobs = {"47110 other (carol)"};
    f->links = {theirs};
    if ((k >= 4 && k < 8) || k >= 12) f->links.push_back(mine);
    h->frames.push_back(f);
  }
  const std::string page = render_job_html(h, 4711, "/metrics");
  REQUIRE_FALSE(page.empty());
  const auto table_at = page.find("<table id=\"job-links\">");
  REQUIRE(table_at != std::string::npos);
  // Worst first: down (minute 12 to the end), then ber_error (4 to 8).
  const auto down = page.find("<td>sw1 port 3</td><td>down</td>", table_at);
  const auto ber = page.find("<td>sw1 port 3</td><td>ber_error</td>", table_at);
  REQUIRE(down != std::string::npos);
  REQUIRE(ber != std::string::npos);
  CHECK(down < ber);
  CHECK(page.find("href=\"/?at=1764720720\">2025-12-03 00:12:00 UTC</a>", down) <
        page.find("</tr>", down));
  CHECK(page.find("href=\"/?at=1764720240\">2025-12-03 00:04:00 UTC</a></td><td>2025-12-03 "
                  "00:07:00 UTC</td>",
                  ber) < page.find("</tr>", ber));
  // Names escaped; job 47110's link is not job 4711's.
  CHECK(page.find("&lt;img src=x&gt; mlx5_0 port 1") != std::string::npos);
  CHECK(page.find("<img") == std::string::npos);
  CHECK(page.find("sw2 port 5") == std::string::npos);
}

}  // namespace ibfx
