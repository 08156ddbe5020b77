// RenderContext: the label strings of a fabric are built once and shared by
// every snapshot of it, and built again when what they are made of changes.
#include "daemon/render_context.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "daemon/snapshot.h"
#include "fake_fabric.h"

using namespace ibfx;

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
