#include "daemon/exporter_metrics.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "test/support/text_lines.h"

using namespace ibfx;

namespace {

using ibfx::test::has_line;
}  // namespace

TEST_CASE("ExporterMetrics counts probes and clears the SM guard withheld", "[exporter_metrics]") {
  ExporterMetrics m;
  SweepResult sweep;
  sweep.probes_withheld = 3;
  sweep.clears_withheld = 2;
  m.on_sweep(sweep, 0, false);
  sweep.probes_withheld = 1;
  sweep.clears_withheld = 0;
  m.on_sweep(sweep, 0, false);
  const std::string text = m.serialize();
  CHECK(has_line(text, "infiniband_exporter_optional_probes_withheld_total 4"));
  CHECK(has_line(text, "infiniband_exporter_clears_withheld_total 2"));
}

TEST_CASE("ExporterMetrics adds the HTTP server's evicted and refused connections",
          "[exporter_metrics]") {
  ExporterMetrics m;
  CHECK(m.serialize().find("infiniband_exporter_http_connections") == std::string::npos);
  m.on_http(2, 5);
  m.on_http(3, 5);  // cumulative: only the difference is added
  const std::string text = m.serialize();
  CHECK(has_line(text, "infiniband_exporter_http_connections_evicted_total 3"));
  CHECK(has_line(text, "infiniband_exporter_http_connections_refused_total 5"));
}

TEST_CASE("ExporterMetrics serializes the engine's and accumulator's totals as they are",
          "[exporter_metrics]") {
  ExporterMetrics m;
  MadEngineStats mad;
  mad.ok = 10;
  mad.timeouts = 2;
  AccumulatorStats acc;
  acc.clears[static_cast<std::size_t>(Counter::kSymbolErrors)] = 1;
  m.update_totals(mad, acc);
  mad.ok = 25;  // cumulative: the latest totals are what is exported
  acc.clears[static_cast<std::size_t>(Counter::kSymbolErrors)] = 3;
  m.update_totals(mad, acc);
  const std::string text = m.serialize();
  CHECK(has_line(text, "infiniband_exporter_mad_requests_total{result=\"ok\"} 25"));
  CHECK(has_line(text, "infiniband_exporter_mad_requests_total{result=\"timeout\"} 2"));
  CHECK(has_line(text, "infiniband_exporter_mad_requests_total{result=\"error\"} 0"));
  CHECK(has_line(text, "infiniband_exporter_counters_cleared_total{counter=\"symbol_errors\"} 3"));
  // Each family once, beside the registry's own.
  CHECK(text.find("# TYPE infiniband_exporter_mad_requests_total counter") ==
        text.rfind("# TYPE infiniband_exporter_mad_requests_total counter"));
  CHECK(has_line(text, "infiniband_exporter_sweeps_total 0"));
}

TEST_CASE("ExporterMetrics counts sweeps, overruns and sweeps cut short", "[exporter_metrics]") {
  ExporterMetrics m;
  SweepResult sweep;
  sweep.ports_read = 12;
  sweep.stale_nodes = 0;
  m.on_sweep(sweep, 1, false);
  sweep.completed = false;
  sweep.stale_nodes = 3;
  m.on_sweep(sweep, 0, true);
  const std::string text = m.serialize();
  CHECK(has_line(text, "infiniband_exporter_sweeps_total 2"));
  CHECK(has_line(text, "infiniband_exporter_sweeps_incomplete_total 1"));
  CHECK(has_line(text, "infiniband_exporter_sweep_overruns_total 1"));
  CHECK(has_line(text, "infiniband_exporter_swept_ports 12"));
  CHECK(has_line(text, "infiniband_exporter_nodes_not_answering 0"));
  CHECK(has_line(text, "infiniband_exporter_stale_nodes 3"));
}

TEST_CASE("ExporterMetrics exports the snapshot publisher's published, dropped and render time",
          "[exporter_metrics]") {
  ExporterMetrics m;
  m.on_publisher(0, 0, 0);
  std::string text = m.serialize();
  CHECK(has_line(text, "infiniband_exporter_snapshots_published_total 0"));
  CHECK(has_line(text, "infiniband_exporter_snapshots_dropped_total 0"));
  CHECK(has_line(text, "infiniband_exporter_last_render_duration_seconds 0"));
  m.on_publisher(3, 1, 0.25);
  m.on_publisher(7, 2, 0.5);  // cumulative: only the difference is added
  text = m.serialize();
  CHECK(has_line(text, "infiniband_exporter_snapshots_published_total 7"));
  CHECK(has_line(text, "infiniband_exporter_snapshots_dropped_total 2"));
  CHECK(has_line(text, "infiniband_exporter_last_render_duration_seconds 0.5"));
  CHECK(has_line(text, "infiniband_exporter_last_render_reused_ratio 0"));
  m.on_publisher(8, 2, 0.5, 300, 100);
  text = m.serialize();
  CHECK(has_line(text, "infiniband_exporter_last_render_reused_ratio 0.75"));
  // Names, types and help as promtool wants them.
  const std::string path = "/tmp/ibfx_exporter_metrics_" + std::to_string(::getpid()) + ".prom";
  std::ofstream(path) << text;
  CHECK(std::system(("promtool check metrics < " + path + " >/dev/null 2>&1").c_str()) == 0);
  std::remove(path.c_str());
}

TEST_CASE("ExporterMetrics exports the route reader's health", "[exporter_metrics]") {
  ExporterMetrics m;
  CHECK(m.serialize().find("infiniband_exporter_route_") == std::string::npos);
  RouteReaderStats routes;
  routes.smps_answered = 40;
  routes.smps_failed = 2;
  routes.smps_cancelled = 1;
  routes.switches = 6;
  routes.stale = 1;
  routes.incomplete = 0;
  routes.full_reads = 1;
  routes.full_read_seconds = 1.5;
  routes.oldest_read_at = std::chrono::system_clock::now() - std::chrono::seconds(30);
  m.on_routes(routes);
  routes.smps_answered = 50;  // cumulative: 10 more
  routes.reroutes = 2;
  m.on_routes(routes);
  const std::string text = m.serialize();
  CHECK(has_line(text, "infiniband_exporter_route_smps_total{result=\"answered\"} 50"));
  CHECK(has_line(text, "infiniband_exporter_route_smps_total{result=\"failed\"} 2"));
  CHECK(has_line(text, "infiniband_exporter_route_smps_total{result=\"cancelled\"} 1"));
  CHECK(has_line(text, "infiniband_exporter_route_full_reads_total 1"));
  CHECK(has_line(text, "infiniband_exporter_route_table_changes_total 2"));
  CHECK(has_line(text, "infiniband_exporter_route_full_read_seconds 1.5"));
  CHECK(has_line(text, "infiniband_exporter_route_tables 6"));
  CHECK(has_line(text, "infiniband_exporter_route_tables_stale 1"));
  CHECK(has_line(text, "infiniband_exporter_route_tables_incomplete 0"));
  // The sample line, not its # HELP.
  const auto age = text.find("\ninfiniband_exporter_route_table_age_seconds ");
  REQUIRE(age != std::string::npos);
  const double seconds = std::stod(text.substr(age + 45));
  CHECK(seconds >= 30);
  CHECK(seconds < 300);
}
