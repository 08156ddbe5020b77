#include "daemon/exporter_metrics.h"

#include <catch2/catch.hpp>
#include <string>

using namespace ibfx;

namespace {
bool has_line(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}
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
