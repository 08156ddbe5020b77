// RenderContext: the label strings every renderer shares (a node's and a
// port's identity, the named forms with node-name-map names, tier and rail),
// which ports' counters are exported, and where each analysed port sits; the
// strings of a fabric are built once and shared by every snapshot of it, and
// built again when what they are made of changes.
#include "exposition/render_context.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "snapshot/snapshot.h"
#include "test/support/fake_fabric.h"
#include "test/support/snapshot_support.h"

using namespace ibfx;

namespace {

// leaf-01 (0x100) with gpu0 (0x200, named "gpu-a") and gpu1 (0x201) on its
// ports 1 and 2, and a spare port 3; gpu1 says "a \"quoted\" name".
std::shared_ptr<Snapshot> snapshot() {
  Fabric f = ibfx::test::star_fabric(2, 1);
  f.nodes[2].description = "a \"quoted\" name";
  auto fabric = std::make_shared<const Fabric>(std::move(f));
  CounterAccumulator acc;
  SweepResult sweep;
  sweep.nodes.resize(3, NodeSweep{.swept = true, .reached = true, .answered = true});
  return test::make_snapshot(fabric, sweep, acc, {{0x200, "gpu-a"}});
}

std::size_t view(const Snapshot& s, std::uint64_t guid, std::uint8_t number) {
  for (std::size_t i = 0; i < s.ports.size(); ++i) {
    const FabricNode& n = s.fabric->nodes[s.ports[i].node];
    if (n.guid == guid && n.ports[s.ports[i].port_index].number == number) return i;
  }
  FAIL("no view of " << guid << ":" << int(number));
  return 0;
}

}  // namespace

TEST_CASE("RenderContext: node and port identities, named with the node-name-map",
          "[render_context]") {
  const auto s = snapshot();
  const RenderContext ctx(*s);
  CHECK(&ctx.snapshot() == s.get());
  CHECK(ctx.fabric().nodes.size() == 3);
  CHECK(ctx.node_id(0) == "node_guid=\"0x0000000000000100\"");
  CHECK(ctx.node_id(2) == "node_guid=\"0x0000000000000201\"");
  REQUIRE(ctx.port_ids().size() == s->ports.size());
  const std::size_t leaf3 = view(*s, 0x100, 3);
  CHECK(ctx.port_id(leaf3) == "node_guid=\"0x0000000000000100\",port=\"3\"");
  // The map's name wins over NodeDescription; names are escaped.
  CHECK(ctx.node_named(1) ==
        "node_guid=\"0x0000000000000200\",node_name=\"gpu-a\",node_type=\"hca\"");
  CHECK(ctx.node_named(2) ==
        "node_guid=\"0x0000000000000201\",node_name=\"a \\\"quoted\\\" name\",node_type=\"hca\"");
  // Without a topology, tier and rail are empty.
  CHECK(ctx.tier_of(0).empty());
  CHECK(ctx.rail_of(1).empty());
  CHECK(ctx.port_named(leaf3) ==
        "node_guid=\"0x0000000000000100\",node_name=\"leaf-01\",node_type=\"switch\",port=\"3\","
        "tier=\"\",rail=\"\"");
}

TEST_CASE("RenderContext: tier and rail come from the snapshot's topology", "[render_context]") {
  const auto s = snapshot();
  auto topology = std::make_shared<Topology>();
  topology->tier = {Tier::kLeaf, Tier::kHca, Tier::kHca};
  topology->rail = {kNoRail, 0, 1};
  s->analysis.topology = topology;
  const RenderContext ctx(*s);
  CHECK(ctx.tier_of(0) == "leaf");
  CHECK(ctx.tier_of(2) == "hca");
  CHECK(ctx.rail_of(0).empty());  // kNoRail
  CHECK(ctx.rail_of(1) == "0");
  CHECK(ctx.rail_of(2) == "1");
  CHECK(ctx.port_named(view(*s, 0x201, 1)) ==
        "node_guid=\"0x0000000000000201\",node_name=\"a \\\"quoted\\\" name\",node_type=\"hca\","
        "port=\"1\",tier=\"hca\",rail=\"1\"");
}

TEST_CASE("RenderContext: which ports' counters the export: section lets through",
          "[render_context]") {
  const auto s = snapshot();
  const std::size_t sw = view(*s, 0x100, 1);
  const std::size_t hca = view(*s, 0x200, 1);
  {
    const RenderContext ctx(*s);  // the defaults: every port
    CHECK(ctx.port_exported(sw));
    CHECK(ctx.port_exported(hca));
  }
  s->exporting.hca_port_counters = false;
  {
    const RenderContext ctx(*s);
    CHECK(ctx.port_exported(sw));
    CHECK_FALSE(ctx.port_exported(hca));
  }
  s->exporting.port_counters = false;  // aggregates only
  {
    const RenderContext ctx(*s);
    CHECK_FALSE(ctx.port_exported(sw));
    CHECK_FALSE(ctx.port_exported(hca));
  }
}

TEST_CASE("RenderContext: analysed ports map back to their port views", "[render_context]") {
  const auto s = snapshot();
  {
    // No analysis yet (the first sweep): nothing to look up.
    const RenderContext ctx(*s);
    CHECK(ctx.view_of(0, 0) == -1);
  }
  PortScore score;
  score.node = 0;
  score.port_index = 1;
  s->analysis.result.ports.push_back(score);
  const RenderContext ctx(*s);
  const std::int64_t v = ctx.view_of(0, 1);
  REQUIRE(v >= 0);
  const PortView& pv = s->ports[static_cast<std::size_t>(v)];
  CHECK(pv.node == 0);
  CHECK(pv.port_index == 1);
  CHECK(ctx.view_of(2, 0) == static_cast<std::int64_t>(view(*s, 0x201, 1)));
  CHECK(ctx.view_of(7, 0) == -1);
}

TEST_CASE("RenderContext of a snapshot without a fabric has no nodes", "[render_context]") {
  Snapshot empty;
  const RenderContext ctx(empty);
  CHECK(ctx.fabric().nodes.empty());
  CHECK(ctx.port_ids().empty());
}

namespace {
std::shared_ptr<Snapshot> snapshot_of(std::shared_ptr<const Fabric> fabric) {
  auto s = std::make_shared<Snapshot>();
  s->fabric = std::move(fabric);
  for (std::uint32_t n = 0; n < s->fabric->nodes.size(); ++n) {
    s->node_names.push_back(s->fabric->nodes[n].description);
    for (std::uint32_t i = 0; i < s->fabric->nodes[n].ports.size(); ++i) {
      PortView v;
      v.node = n;
      v.port_index = i;
      s->ports.push_back(v);
    }
  }
  return s;
}
}  // namespace

TEST_CASE("RenderContext labels are built once per fabric and rebuilt when names change",
          "[render_context]") {
  auto fabric = std::make_shared<Fabric>(ibfx::test::star_fabric(2));
  const auto a = snapshot_of(fabric);
  const auto b = snapshot_of(fabric);
  const auto labels = RenderContext::labels(*a);
  // Another snapshot of the same fabric: the same strings, not a copy.
  CHECK(RenderContext::labels(*b) == labels);

  const RenderContext ctx(*b);
  // Port views in fabric order: the switch's ports, then gpu0's, gpu1's.
  const std::size_t gpu0 = b->fabric->nodes[0].ports.size();
  CHECK(ctx.node_id(1) == R"(node_guid="0x0000000000000200")");
  CHECK(ctx.port_id(gpu0) == R"(node_guid="0x0000000000000200",port="1")");
  CHECK(ctx.port_info_labels(gpu0).rfind(std::string(ctx.port_id(gpu0)) + ",link_width=", 0) == 0);
  CHECK(ctx.port_info_labels(gpu0).find(R"(remote_node_name="leaf-01")") != std::string::npos);

  // A renamed node (node-name-map reloaded): its peers' labels say so.
  b->node_names[0] = "leaf-renamed";
  const RenderContext renamed(*b);
  CHECK(RenderContext::labels(*b) != labels);
  CHECK(renamed.port_info_labels(gpu0).find(R"(remote_node_name="leaf-renamed")") !=
        std::string::npos);

  // A fabric changed in place (as tests do) is not served stale labels.
  fabric->nodes[1].guid = 0x2ff;
  const RenderContext changed(*a);
  CHECK(changed.node_id(1) == R"(node_guid="0x00000000000002ff")");
}

TEST_CASE("RenderContext finds analysed ports by node and port index", "[render_context]") {
  auto s = snapshot_of(std::make_shared<const Fabric>(ibfx::test::star_fabric(2)));
  // Only an analysed snapshot has the index.
  CHECK(RenderContext(*s).view_of(1, 0) == -1);
  PortScore score;
  score.node = 1;
  s->analysis.result.ports.push_back(score);
  const RenderContext ctx(*s);
  const auto gpu0 = static_cast<std::int64_t>(s->fabric->nodes[0].ports.size());
  CHECK(ctx.view_of(1, 0) == gpu0);
  CHECK(ctx.view_of(2, 0) == gpu0 + 1);
  CHECK(ctx.view_of(0, 0) == 0);
  CHECK(ctx.view_of(1, 1) == -1);  // gpu0 has one port
  CHECK(ctx.view_of(3, 0) == -1);  // no such node
  CHECK(ctx.view_of(-1, 0) == -1);
}
