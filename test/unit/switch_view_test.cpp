// The switch view (/?node=NAME): a node's ports with W, U and far ends,
// found by name, NodeDescription or GUID; hostile names escaped.
#include "views/switch_view.h"

#include <catch2/catch.hpp>
#include <string>

#include "test/support/status_support.h"

namespace ibfx {

TEST_CASE("find_node_named finds a node by name, description or GUID", "[switch_view]") {
  const test::StatusFixture fx = test::status_fixture();
  const Snapshot& s = *fx.snapshot;
  CHECK(find_node_named(s, "leaf-r0-0") == std::size_t{0});
  CHECK(find_node_named(s, guid_hex(s.fabric->nodes[3].guid)) == std::size_t{3});
  CHECK(find_node_named(s, "host0 mlx5_0") == static_cast<std::size_t>(fx.rail.hca[0][0]));
  CHECK_FALSE(find_node_named(s, "nope").has_value());
  CHECK_FALSE(find_node_named(s, "").has_value());
}

TEST_CASE("the switch view shows each port's link health", "[switch_view][links]") {
  test::StatusFixture fx = test::status_fixture();
  const std::string healthy = render_switch_html(*fx.snapshot, 0);
  CHECK(healthy.find("<th>Far end</th><th>Link</th>") != std::string::npos);
  CHECK(healthy.find("</a> port 1</td><td>ok</td></tr>") != std::string::npos);
  fx.snapshot->links = test::unhealthy_links(fx);
  // leaf-r0-0 port 1: its cable has a BER error (into host0); the BER into
  // the leaf's own receiver is shown for this port.
  const std::string html = render_switch_html(*fx.snapshot, 0);
  CHECK(test::unexpected_tag(html).empty());
  CHECK(html.find("</a> port 1</td><td>ber_error, BER in 2.0e-15</td></tr>") != std::string::npos);
}

TEST_CASE("the switch view shows every port with its far end, W and U", "[switch_view]") {
  const test::StatusFixture fx = test::status_fixture();
  const std::string html = render_switch_html(*fx.snapshot, 0);
  CHECK(test::unexpected_tag(html).empty());
  CHECK(html.find("<h1>leaf-r0-0</h1>") != std::string::npos);
  CHECK(html.find("<title>port 1 to host0 mlx5_0 port 1, W 0.050, U 0.980</title>") !=
        std::string::npos);
  CHECK(html.find("<a href=\"/?node=host0%20mlx5_0\">host0 mlx5_0</a> port 1") !=
        std::string::npos);
  CHECK(html.find("<a href=\"/?node=spine-r0-0\">") != std::string::npos);
  const std::size_t ports = fx.snapshot->fabric->nodes[0].ports.size();
  std::size_t rows = 0;
  for (auto at = html.find("<tr><td class=\"n\">"); at != std::string::npos;
       at = html.find("<tr><td class=\"n\">", at + 1)) {
    ++rows;
  }
  CHECK(rows == ports);
  CHECK(html.find("href=\"/metrics\"") != std::string::npos);
}

TEST_CASE("the switch view and the unknown-node page escape hostile names", "[switch_view]") {
  const test::StatusFixture fx =
      test::status_fixture({{0, "<script>x</script>"}, {static_cast<int>(1), "\"><img src=x>"}});
  // Node 1 is leaf-r0-1; its uplinks reach the spines, whose view lists it.
  const std::string spine =
      render_switch_html(*fx.snapshot, static_cast<std::size_t>(fx.rail.spine[0][0]));
  CHECK(test::unexpected_tag(spine).empty());
  CHECK(spine.find("&lt;script&gt;x&lt;/script&gt;") != std::string::npos);
  CHECK(spine.find("&quot;&gt;&lt;img src=x&gt;") != std::string::npos);
  const std::string own = render_switch_html(*fx.snapshot, 0);
  CHECK(test::unexpected_tag(own).empty());
  CHECK(own.find("<title>&lt;script&gt;x&lt;/script&gt; - InfiniBand") != std::string::npos);
  const std::string unknown = render_unknown_node_html("</p><script>alert(1)</script>");
  CHECK(test::unexpected_tag(unknown).empty());
  CHECK(unknown.find("&lt;/p&gt;&lt;script&gt;") != std::string::npos);
}

}  // namespace ibfx
