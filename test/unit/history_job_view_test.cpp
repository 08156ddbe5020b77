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
      HistoryRoot r = test::history_root(3, 7, 4.5);
      r.jobs_known = true;
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

  std::string link;
  append_job_link(link, "4711 <b> (x)");
  CHECK(link == "<a href=\"/?job=4711\">4711 &lt;b&gt; (x)</a>");
  std::string plain;
  append_job_link(plain, "unknown");
  CHECK(plain == "unknown");
}

}  // namespace ibfx
