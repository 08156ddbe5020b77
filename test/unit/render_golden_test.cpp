// Golden .prom fixtures for each renderer (test/support/golden.h): a small
// fixed fabric rendered by one renderer, compared byte for byte with
// test/data/golden/<name>.prom.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "api/top_view.h"
#include "exposition/gzip.h"
#include "exposition/metric_families.h"
#include "exposition/render_events.h"
#include "exposition/render_health.h"
#include "exposition/render_jobs.h"
#include "exposition/render_link_ber.h"
#include "exposition/render_links.h"
#include "exposition/render_nodes.h"
#include "exposition/render_port_counters.h"
#include "exposition/render_port_info.h"
#include "exposition/render_routes.h"
#include "exposition/render_scores.h"
#include "exposition/render_topology.h"
#include "exposition/render_vl_counters.h"
#include "snapshot/snapshot.h"
#include "test/support/fake_fabric.h"
#include "test/support/golden.h"
#include "test/support/snapshot_support.h"

using namespace ibfx;

namespace {

// leaf-01 with two HCAs and one spare port; counters on two ports; one root
// of congestion, a utilisation histogram, a fixed daemon-metrics text.
std::shared_ptr<Snapshot> fixed_snapshot(bool port_scores) {
  auto fabric = std::make_shared<const Fabric>(ibfx::test::star_fabric(2, 1));
  CounterAccumulator acc;
  CounterReading r;
  r.set(Counter::kTransmitWait, 1000, 32);
  r.set(Counter::kTransmitDataBytes, 250, 64);
  r.set(Counter::kSymbolErrors, 3, 16);
  r.set(Counter::kLinkDowned, 0, 8);  // never counted: absent unless zero_error_counters
  r.set(Counter::kLinkErrorRecovery, 2, 8);
  acc.apply(PortKey{0x100, 2}, r, {});
  CounterReading h;
  h.set(Counter::kReceiveDataBytes, 7, 64);
  acc.apply(PortKey{0x200, 1}, h, {});
  SweepResult sweep;
  sweep.nodes.resize(3, NodeSweep{.swept = true, .reached = true, .answered = true});
  sweep.nodes[2].answered = false;
  auto snap = test::make_snapshot(fabric, std::move(sweep), acc, {{0x201, "gpu-b"}});
  snap->exporting.port_scores = port_scores;
  PortScore root;
  root.node = 0;
  root.port_index = 1;
  root.valid = true;
  root.stall = 0.25;
  root.utilization_valid = true;
  root.utilization = 0.75;
  AnalysisResult& result = snap->analysis.result;
  result.ports.push_back(root);
  result.top_ports.push_back(0);
  result.congestion.roots.push_back({0, CongestionCause::kIncast, 2.5, 2});
  result.congestion.imbalance.push_back({0, 2, 1.5});
  snap->analysis.utilization_histograms[{Tier::kLeaf, 0}].observe(0.75);
  snap->analysis.clamped_total = 1;
  // One active congestion event on the root and one ended before it.
  auto events = std::make_shared<EventList>();
  CongestionEvent active;
  active.id = 2;
  active.root = {0x100, "leaf-01"};
  active.root_port = 2;
  active.far = {0x201, "gpu-b"};
  active.far_port = 1;
  active.cause = CongestionCause::kIncast;
  active.start = 1764720000;
  active.last_seen = 1764720090;
  active.peak_score = 2.5;
  active.peak_victims = 2;
  active.congested_seconds = 90;
  CongestionEvent ended = active;
  ended.id = 1;
  ended.cause = CongestionCause::kSlowReceiver;
  ended.start = 1764710000;
  ended.last_seen = 1764710125;
  ended.end = 1764710125;
  ended.congested_seconds = 120;
  *events = {active, ended};
  snap->events = events;
  snap->event_counters.started[static_cast<std::size_t>(CongestionCause::kIncast)] = 1;
  snap->event_counters.started[static_cast<std::size_t>(CongestionCause::kSlowReceiver)] = 1;
  snap->event_counters.seconds[static_cast<std::size_t>(CongestionCause::kIncast)] = 90;
  snap->event_counters.seconds[static_cast<std::size_t>(CongestionCause::kSlowReceiver)] = 120;
  snap->exporter_metrics_text =
      "# HELP infiniband_exporter_sweeps_total PMA sweeps run.\n"
      "# TYPE infiniband_exporter_sweeps_total counter\n"
      "infiniband_exporter_sweeps_total 2\n";
  return snap;
}

// fixed_snapshot with jobs.source set: two running jobs, the first on
// gpu0 (under the root, 2 of its ports in the root's tree), the second's
// name and user with characters to escape; the source's last poll failed.
std::shared_ptr<Snapshot> jobs_snapshot() {
  auto snap = fixed_snapshot(false);
  JobsView& jobs = snap->jobs;
  jobs.enabled = true;
  jobs.source_up = false;
  jobs.last_success_seconds = 1764763200;
  JobPorts a;
  a.job_id = 4711;
  a.name = "train";
  a.user = "alice";
  a.partition = "gpu";
  a.hca_ports = 1;
  a.transmit_wait_seconds = 12.5;
  a.stall_ratio_max = 0.25;
  JobPorts b;
  b.job_id = 4712;
  b.name = "say \"hi\"\nbye";
  b.user = "bob\\";
  b.partition = "cpu";
  jobs.join.jobs = {a, b};
  jobs.join.roots.push_back({0, {{0, 2}}});
  // Receipts on (issue #44): three clean jobs ended, one hurt by another's.
  snap->receipts.enabled = true;
  snap->receipts.finished[static_cast<std::size_t>(ReceiptVerdict::kClean)] = 3;
  snap->receipts.finished[static_cast<std::size_t>(ReceiptVerdict::kOtherJobs)] = 1;
  return snap;
}

// fixed_snapshot with the opt-in groups' lanes: per-VL PortXmitWait (VLs 0
// and 5) and time congested (VL 1) on leaf-01 port 2, per-SL FECN and BECN
// (SL 3) on gpu0.
std::shared_ptr<Snapshot> lanes_snapshot() {
  auto snap = fixed_snapshot(false);
  const auto lane = [](LaneCounter c) { return static_cast<std::size_t>(c); };
  CounterAccumulator acc;
  LaneReading sw;
  sw.bits[lane(LaneCounter::kVlXmitWait)] = 16;
  sw.value[lane(LaneCounter::kVlXmitWait)][0] = 1000;
  sw.value[lane(LaneCounter::kVlXmitWait)][5] = 40;
  sw.bits[lane(LaneCounter::kVlXmitTimeCong)] = 32;
  sw.value[lane(LaneCounter::kVlXmitTimeCong)][1] = 77;
  acc.lanes().apply(PortKey{0x100, 2}, sw);
  LaneReading hca;
  hca.bits[lane(LaneCounter::kSlRcvFecn)] = 32;
  hca.value[lane(LaneCounter::kSlRcvFecn)][3] = 9;
  hca.bits[lane(LaneCounter::kSlRcvBecn)] = 32;
  hca.value[lane(LaneCounter::kSlRcvBecn)][3] = 4;
  acc.lanes().apply(PortKey{0x200, 1}, hca);
  snap->lanes = lane_totals(*snap->fabric, acc.lanes());
  return snap;
}

std::string render(const Renderer& renderer, const Snapshot& snap) {
  std::string out;
  ExpositionWriter w(out);
  renderer.render(RenderContext(snap), w);
  return out;
}

void check_golden(const std::string& name, const std::string& text) {
  test::check_golden(name + ".prom", text);
}

}  // namespace

TEST_CASE("TopologyRenderer matches its golden file", "[golden]") {
  check_golden("topology", render(TopologyRenderer{}, *fixed_snapshot(false)));
}

TEST_CASE("PortInfoRenderer matches its golden file", "[golden]") {
  check_golden("port_info", render(PortInfoRenderer{}, *fixed_snapshot(false)));
}

TEST_CASE("PortCounterRenderer matches its golden files, default and with port scores",
          "[golden]") {
  check_golden("port_counters", render(PortCounterRenderer{}, *fixed_snapshot(false)));
  check_golden("port_counters_scores", render(PortCounterRenderer{}, *fixed_snapshot(true)));
}

TEST_CASE("PortCounterRenderer: zero error counters and raw PortXmitWait counts on request",
          "[golden]") {
  // Default: link_downed (0) is absent, errors_total (3 + 2) and the
  // seconds are there, the raw counts are not.
  const std::string lean = render(PortCounterRenderer{}, *fixed_snapshot(false));
  CHECK(lean.find("infiniband_port_link_downed_total") == std::string::npos);
  CHECK(
      lean.find("infiniband_port_errors_total{node_guid=\"0x0000000000000100\",port=\"2\"} 5\n") !=
      std::string::npos);
  CHECK(lean.find("infiniband_port_transmit_wait_total") == std::string::npos);
  auto snap = fixed_snapshot(false);
  snap->exporting.zero_error_counters = true;
  snap->exporting.raw_transmit_wait = true;
  check_golden("port_counters_everything", render(PortCounterRenderer{}, *snap));
}

TEST_CASE("LaneCounterRenderer matches its golden file", "[golden]") {
  check_golden("vl_counters", render(LaneCounterRenderer{}, *lanes_snapshot()));
  CHECK(render(LaneCounterRenderer{}, *fixed_snapshot(false)).empty());
}

TEST_CASE("ScoresRenderer matches its golden file", "[golden]") {
  check_golden("scores", render(ScoresRenderer{}, *fixed_snapshot(false)));
}

TEST_CASE("EventsRenderer matches its golden file: every cause, zeros included", "[golden]") {
  check_golden("events", render(EventsRenderer{}, *fixed_snapshot(false)));
}

TEST_CASE("RoutesRenderer matches its golden file and counts re-routes before any table",
          "[golden][routes]") {
  auto snap = fixed_snapshot(false);
  // No table read yet: the counter alone, at its value.
  snap->routes.changes_total = 0;
  CHECK(render(RoutesRenderer{}, *snap) ==
        "# HELP infiniband_route_changes_total " + std::string(families::kRouteChanges.help) +
            "\n# TYPE infiniband_route_changes_total counter\ninfiniband_route_changes_total 0\n");
  snap->routes.model = RouteModel::build(snap->fabric, std::make_shared<const RouteTables>());
  snap->routes.balance = {{0, 2, 6, 4.0, 1.5, 3}};
  snap->routes.changes_total = 3;
  check_golden("routes", render(RoutesRenderer{}, *snap));
}

// fixed_snapshot with two unhealthy cables: symbol errors at gpu0's receiver
// (the leaf -> gpu0 direction), and leaf port 2 to gpu1 down.
std::shared_ptr<Snapshot> links_snapshot() {
  auto snap = fixed_snapshot(false);
  auto links = std::make_shared<LinkHealthReport>();
  LinkReport ber;
  ber.a = {0x100, 1, 0, 0, true};
  ber.b = {0x200, 1, 1, 0, true};
  ber.into_b = {LinkCondition::kBerError, 2.5e-11, false, {.symbol = 300}};
  ber.condition = LinkCondition::kBerError;
  ber.conditions = 1u << static_cast<unsigned>(LinkCondition::kBerError);
  LinkReport down;
  down.a = {0x100, 2, 0, 1, true};
  down.b = {0x201, 1, 2, 0, false};
  down.condition = LinkCondition::kDown;
  down.conditions = 1u << static_cast<unsigned>(LinkCondition::kDown);
  down.down = true;
  links->links = {down, ber};
  links->port_ber = {{1, 0, 2.5e-11, false}};
  links->events_total[static_cast<std::size_t>(LinkCondition::kBerError)] = 1;
  links->events_total[static_cast<std::size_t>(LinkCondition::kDown)] = 2;
  snap->links = links;
  return snap;
}

TEST_CASE("LinksRenderer and LinkBerRenderer match their golden files", "[golden][links]") {
  check_golden("links", render(LinksRenderer{}, *links_snapshot()));
  check_golden("link_ber", render(LinkBerRenderer{}, *links_snapshot()));
  // A healthy fabric: no per-port byte, the event counters at zero.
  CHECK(render(LinkBerRenderer{}, *fixed_snapshot(false)).empty());
  const std::string healthy = render(LinksRenderer{}, *fixed_snapshot(false));
  CHECK(healthy.find("infiniband_link_unhealthy") == std::string::npos);
  CHECK(healthy.find("infiniband_link_events_total{condition=\"down\"} 0\n") != std::string::npos);
  // Both in the full exposition: the BER with the ports, the links with the aggregates.
  const std::string full = exposition_text(*links_snapshot());
  CHECK(full.find(render(LinksRenderer{}, *links_snapshot())) != std::string::npos);
  CHECK(full.find("infiniband_port_symbol_ber") < full.find("infiniband_congestion_root_score"));
}

TEST_CASE("LinksRenderer: a length outlier is its own series, never unhealthy, no event",
          "[links][length]") {
  auto snap = links_snapshot();
  auto links = std::make_shared<LinkHealthReport>(*snap->links);
  // leaf port 3 to gpu2 (issue #41): informational only; and the BER cable
  // a length outlier too, under its ber_error.
  LinkReport longer;
  longer.a = {0x100, 3, 0, 2, true};
  longer.b = {0x202, 1, 3, 0, true};
  longer.condition = LinkCondition::kLengthOutlier;
  longer.conditions = 1u << static_cast<unsigned>(LinkCondition::kLengthOutlier);
  longer.round_trip_ns = 180;
  longer.peers_round_trip_ns = 100;
  links->links[1].conditions |= 1u << static_cast<unsigned>(LinkCondition::kLengthOutlier);
  links->links[1].round_trip_ns = 250;
  links->links.push_back(longer);
  snap->links = links;
  const std::string text = render(LinksRenderer{}, *snap);
  // The unhealthy series are the golden file's, untouched.
  const std::string golden = render(LinksRenderer{}, *links_snapshot());
  CHECK(text.find(golden.substr(0, golden.find("# HELP infiniband_link_events_total"))) == 0);
  CHECK(text.find("condition=\"length_outlier\"") == std::string::npos);
  CHECK(text.find("infiniband_link_length_outlier{node_guid=\"0x0000000000000100\",port=\"3\","
                  "remote_node_guid=\"0x0000000000000202\",remote_port=\"1\"} 180\n") !=
        std::string::npos);
  CHECK(text.find("infiniband_link_length_outlier{node_guid=\"0x0000000000000100\",port=\"1\","
                  "remote_node_guid=\"0x0000000000000200\",remote_port=\"1\"} 250\n") !=
        std::string::npos);
  // Only the outlier: no infiniband_link_unhealthy at all.
  links->links = {longer};
  const std::string alone = render(LinksRenderer{}, *snap);
  CHECK(alone.find("infiniband_link_unhealthy") == std::string::npos);
  CHECK(alone.find("infiniband_link_length_outlier{") != std::string::npos);
  const std::string path = "/tmp/ibfx_length_" + std::to_string(::getpid()) + ".prom";
  std::ofstream(path) << text;
  CHECK(std::system(("promtool check metrics < " + path + " >/dev/null 2>&1").c_str()) == 0);
  std::remove(path.c_str());
}

TEST_CASE("NodesRenderer matches its golden file: rails of every host, reasons escaped",
          "[golden][nodes]") {
  auto snap = fixed_snapshot(false);
  auto nodes = std::make_shared<NodeHealthReport>();
  auto host = [](std::string name, NodeVerdict v, std::string reason, std::uint32_t active) {
    HostHealth h;
    h.host = std::move(name);
    h.verdict = v;
    h.reason = std::move(reason);
    h.rails_active = active;
    h.rails_expected = 2;
    return h;
  };
  nodes->hosts = {
      host("gpu0001", NodeVerdict::kUnhealthy, "ibfx: mlx5_1 down (leaf-r1-01 p1) since 02:13Z", 1),
      host("gpu0002", NodeVerdict::kHealthy, "", 2),
      host("gpu0003", NodeVerdict::kIncident, "ibfx: fabric incident (4 hosts): mlx5_0 down", 1),
      host("gpu\"x\\", NodeVerdict::kUnhealthy, "ibfx: 1 of 2 rails active", 1)};
  nodes->unhealthy = 2;
  nodes->incident = 1;
  snap->nodes = nodes;
  check_golden("nodes", render(NodesRenderer{}, *snap));
}

TEST_CASE("ExporterHealthRenderer matches its golden file", "[golden]") {
  check_golden("health", render(ExporterHealthRenderer{}, *fixed_snapshot(false)));
}

TEST_CASE("JobsRenderer matches its golden file, passes promtool, renders nothing when off",
          "[golden]") {
  const std::string text = render(JobsRenderer{}, *jobs_snapshot());
  check_golden("jobs", text);
  CHECK(render(JobsRenderer{}, *fixed_snapshot(false)).empty());
  // In the aggregates group, after the scores, before the daemon's health.
  const std::string full = exposition_text(*jobs_snapshot());
  CHECK(full.find(text) != std::string::npos);
  CHECK(full.find("infiniband_congestion_root_score") < full.find("infiniband_job_info"));
  CHECK(full.find("infiniband_job_info") < full.find("infiniband_exporter_sweeps_total"));
  const std::string path = "/tmp/ibfx_jobs_" + std::to_string(::getpid()) + ".prom";
  std::ofstream(path) << full;
  CHECK(std::system(("promtool check metrics < " + path + " >/dev/null 2>&1").c_str()) == 0);
  std::remove(path.c_str());
}

TEST_CASE("The full exposition is every group in order, and each group is its renderers",
          "[golden]") {
  const auto snap = fixed_snapshot(false);
  std::string groups;
  for (std::size_t g = 0; g < kRenderGroupCount; ++g) {
    render_group(*snap, static_cast<RenderGroup>(g),
                 [&groups](std::string_view piece) { groups += piece; });
  }
  CHECK(groups == exposition_text(*snap));
  std::string ports;
  render_group(*snap, RenderGroup::kPorts, [&ports](std::string_view piece) { ports += piece; });
  CHECK(ports == render(PortInfoRenderer{}, *snap) + render(PortCounterRenderer{}, *snap));
}

TEST_CASE("The exposition index records each node's runs and every family header", "[golden]") {
  const auto snap = fixed_snapshot(false);
  ExpositionIndex index;
  std::string text;
  render_group(
      *snap, RenderGroup::kPorts, [&text](std::string_view piece) { text += piece; }, 64, &index);
  CHECK(index.size == text.size());
  std::size_t families = 0;
  for (std::size_t at = 0; (at = text.find("# HELP ", at)) != std::string::npos; ++at) ++families;
  CHECK(index.families.size() == families);
  // Every run is whole lines of its node's series.
  REQUIRE_FALSE(index.runs.empty());
  for (const ExpositionIndex::Run& run : index.runs) {
    const std::string bytes = text.substr(run.bytes.begin, run.bytes.end - run.bytes.begin);
    CHECK(bytes.back() == '\n');
    const std::string guid = guid_hex(snap->fabric->nodes[run.node].guid);
    std::size_t lines = 0;
    for (std::size_t at = 0; at < bytes.size(); at = bytes.find('\n', at) + 1) {
      CHECK(bytes.compare(at, 1, "#") != 0);
      CHECK(bytes.find("node_guid=\"" + guid + "\"", at) < bytes.find('\n', at));
      ++lines;
    }
    CHECK(lines > 0);
  }
}

TEST_CASE("A rendered group is its text, compressed once, and a node slice is that node's lines",
          "[golden]") {
  const auto snap = fixed_snapshot(false);
  const RenderedExposition rendered = RenderedExposition::build(*snap);
  for (std::size_t g = 0; g < kRenderGroupCount; ++g) {
    const RenderedExposition::Group& r = rendered.group(static_cast<RenderGroup>(g));
    GroupSelection one{};
    one[g] = true;
    std::string text;
    render_group(*snap, static_cast<RenderGroup>(g), [&text](std::string_view p) { text += p; });
    CHECK(test::gunzip(test::gzip_member(rendered.runs(one))) == text);
    CHECK(r.deflate.length == text.size());
    CHECK(r.index.size == text.size());
  }
  CHECK(test::gunzip(test::gzip_member(rendered.runs())) == exposition_text(*snap));
  // gpu-b (node 2): its lines in every group, each under its family's header.
  std::vector<bool> wanted{false, false, true};
  std::array<bool, kRenderGroupCount> all{};
  all.fill(true);
  const std::string slice = rendered.node_slice(wanted, all);
  const std::string full = exposition_text(*snap);
  std::size_t lines = 0;
  std::string family;
  for (std::size_t at = 0; at < slice.size(); at = slice.find('\n', at) + 1) {
    const std::string line = slice.substr(at, slice.find('\n', at) - at);
    if (line.rfind("# TYPE ", 0) == 0) family = line.substr(7, line.find(' ', 7) - 7);
    if (line[0] == '#') continue;
    ++lines;
    CHECK(line.find(R"(node_guid="0x0000000000000201")") != std::string::npos);
    CHECK(line.rfind(family, 0) == 0);
    CHECK(full.find("\n" + line + "\n") != std::string::npos);
  }
  // Every series of node 2 in the full text is in the slice.
  std::size_t expected = 0;
  for (std::size_t at = 0; at < full.size(); at = full.find('\n', at) + 1) {
    const std::string line = full.substr(at, full.find('\n', at) - at);
    if (line.find(R"({node_guid="0x0000000000000201")") != std::string::npos) ++expected;
  }
  CHECK(lines == expected);
  // The slice of nodes and the aggregates pass promtool.
  const std::string path = "/tmp/ibfx_slice_" + std::to_string(::getpid()) + ".prom";
  for (const std::string& text :
       {slice, test::gunzip(test::gzip_member(rendered.runs({false, false, true})))}) {
    std::ofstream(path) << text;
    CHECK(std::system(("promtool check metrics < " + path + " >/dev/null 2>&1").c_str()) == 0);
  }
  std::remove(path.c_str());
}

TEST_CASE("render_top lists the root, the hottest ports with W, U and far end, silent nodes",
          "[top]") {
  const auto snap = fixed_snapshot(false);
  const std::string top = render_top(*snap, 10);
  INFO(top);
  // The root: leaf-01 port 2, incast, 2 victims, towards gpu-b port 1.
  CHECK(top.find("leaf-01:2") != std::string::npos);
  CHECK(top.find("incast") != std::string::npos);
  CHECK(top.find("gpu-b:1") != std::string::npos);
  // The hottest port with its W, U and cumulative errors (3 symbol errors).
  CHECK(top.find("0.250  0.750") != std::string::npos);
  CHECK(top.find(" 5  gpu-b:1") != std::string::npos);
  // The active event first, then the ended one, with start, duration and root.
  const auto events = top.find("CONGESTION EVENTS");
  REQUIRE(events != std::string::npos);
  const auto active = top.find("2      active 2025-12-03 00:00:00     1m30s incast", events);
  const auto ended = top.find("1      ended  2025-12-02 21:13:20     2m05s slow_receiver", events);
  CHECK(active != std::string::npos);
  CHECK(ended != std::string::npos);
  CHECK(active < ended);
  CHECK(top.find("leaf-01:2", active) < top.find('\n', active));
  // gpu-b (node 2) answered nothing.
  const auto silent = top.find("NODES NOT ANSWERING");
  REQUIRE(silent != std::string::npos);
  CHECK(top.find("gpu-b", silent) != std::string::npos);
  CHECK(top.find("0x0000000000000201", silent) != std::string::npos);
  // n bounds every table.
  CHECK(render_top(*snap, 1).find("leaf-01:2") != std::string::npos);
  // Without jobs.source no JOBS column and no jobs table.
  CHECK(top.find("JOBS") == std::string::npos);
}

TEST_CASE("render_top: a LINKS table, worst first, the receiving end first", "[top][links]") {
  const std::string healthy = render_top(*fixed_snapshot(false), 10);
  CHECK(healthy.find("LINKS (unhealthy cables") != std::string::npos);
  auto snap = links_snapshot();
  const std::string top = render_top(*snap, 10);
  INFO(top);
  const auto links = top.find("LINKS (unhealthy cables");
  REQUIRE(links != std::string::npos);
  const auto down = top.find("down        leaf-01:2", links);
  // The BER error is counted at gpu0's receiver: gpu0 first, then its far end.
  const auto ber = top.find("ber_error   gpu0 mlx5_0:1", links);
  CHECK(down != std::string::npos);
  CHECK(ber != std::string::npos);
  CHECK(down < ber);
  CHECK(top.find("2.5e-11", ber) < top.find('\n', ber));
  CHECK(top.find("leaf-01:1", ber) < top.find('\n', ber));
  CHECK(render_top(*snap, 1).find("... and 1 more") != std::string::npos);
}

namespace {

// The row of the roots table that names `port`, "" when none.
std::string root_row(const std::string& top, const std::string& port) {
  const auto table = top.find("ROOTS OF CONGESTION");
  const auto end = top.find("\nCONGESTION EVENTS");
  const auto at = top.find("  " + port + " ", table);
  if (table == std::string::npos || at == std::string::npos || at > end) return "";
  return top.substr(at, top.find('\n', at) - at);
}

}  // namespace

TEST_CASE("render_top: a root on an unhealthy cable names its condition, a degraded link says why",
          "[top][links]") {
  // The root, leaf-01 port 2: a healthy cable, then the down one of
  // links_snapshot(), then the same cable degraded below what both ends enable.
  const std::string healthy = root_row(render_top(*fixed_snapshot(false), 10), "leaf-01:2");
  INFO(healthy);
  CHECK(healthy.find(" -            gpu-b:1") != std::string::npos);
  auto snap = links_snapshot();
  const std::string top = render_top(*snap, 10);
  INFO(top);
  CHECK(top.find("VICTIMS LINK         FAR END") != std::string::npos);
  CHECK(root_row(top, "leaf-01:2").find(" down         gpu-b:1") != std::string::npos);

  auto links = std::make_shared<LinkHealthReport>(*snap->links);
  LinkReport& cable = links->links[0];
  cable.condition = LinkCondition::kDegraded;
  cable.conditions = 1u << static_cast<unsigned>(LinkCondition::kDegraded);
  cable.down = false;
  cable.below_enabled = true;
  cable.rate_gbps = 50;
  cable.enabled.width_active = 8;      // 12x (IBA LinkWidthEnabled bit 3)
  cable.enabled.speed_ext_active = 4;  // HDR
  snap->links = links;
  const std::string degraded = render_top(*snap, 10);
  INFO(degraded);
  CHECK(root_row(degraded, "leaf-01:2").find(" degraded     gpu-b:1") != std::string::npos);
  const auto row = degraded.find("degraded    leaf-01:2");
  REQUIRE(row != std::string::npos);
  // Its own width and speed (the fabric's), then the best both ends enable.
  const FabricPort& port = snap->fabric->nodes[0].ports[1];
  const std::string why = "  degraded: " + std::string(link_width_name(port.width_active)) + " " +
                          std::string(link_speed_name(port)) +
                          ", below the 12x HDR both ends enable\n";
  CHECK(degraded.find(why, row) == degraded.find('\n', row) + 1 - why.size());
}

TEST_CASE("render_top with jobs: a JOBS column per root, the jobs hurt most first", "[top]") {
  const std::string top = render_top(*jobs_snapshot(), 10);
  INFO(top);
  // The root's row ends with its one job before the far end.
  CHECK(top.find("VICTIMS     JOBS LINK         FAR END") != std::string::npos);
  CHECK(top.find("       2        1 -            gpu-b:1") != std::string::npos);
  const auto table = top.find("JOBS HURT MOST");
  REQUIRE(table != std::string::npos);
  CHECK(top.find("job source down", table) != std::string::npos);
  // 4711 (W 0.25, 12.5 s, one HCA port, one root) before 4712; Slurm's
  // strings printable only.
  const auto first = top.find("4711", table);
  CHECK(first < top.find("4712", table));
  CHECK(top.find("0.250     12.500     1     1", first) != std::string::npos);
  CHECK(top.find("say \"hi\"?bye") != std::string::npos);
  CHECK(render_top(*jobs_snapshot(), 1).find("... and 1 more") != std::string::npos);
}
