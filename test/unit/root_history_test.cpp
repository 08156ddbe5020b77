#include "analysis/root_history.h"

#include <catch2/catch.hpp>

namespace {

ibfx::Fabric two_ports() {
  ibfx::Fabric f;
  ibfx::FabricNode n;
  n.guid = 0x10;
  n.ports.resize(2);
  n.ports[0].number = 1;
  n.ports[1].number = 2;
  f.nodes.push_back(n);
  return f;
}

std::vector<ibfx::PortSample> samples() {
  std::vector<ibfx::PortSample> s(2);
  s[0].node = 0;
  s[0].port_index = 0;
  s[1].node = 0;
  s[1].port_index = 1;
  return s;
}

std::vector<ibfx::PortScore> scores() {
  std::vector<ibfx::PortScore> p(2);
  p[0].node = 0;
  p[0].port_index = 0;
  p[1].node = 0;
  p[1].port_index = 1;
  return p;
}

// A forest in which port `root` (or none) is a root.
ibfx::CongestionForest forest(std::size_t root) {
  ibfx::CongestionForest f;
  f.root.assign(2, ibfx::kNoPort);
  f.parent.assign(2, ibfx::kNoPort);
  if (root != ibfx::kNoPort) {
    f.root[root] = root;
    ibfx::CongestionRoot r;
    r.port = root;
    f.roots.push_back(r);
  }
  return f;
}

}  // namespace

TEST_CASE("RootHistory holds a root through one quiet sweep, then lets it go", "[congestion]") {
  const auto fabric = two_ports();
  ibfx::RootHistory h;
  CHECK(h.recall(fabric, samples()).held == std::vector<std::uint8_t>{0, 0});
  h.update(fabric, scores(), forest(1));
  CHECK(h.recall(fabric, samples()).held == std::vector<std::uint8_t>{0, 1});
  // One sweep without the root: still held (grace), then released.
  h.update(fabric, scores(), forest(ibfx::kNoPort));
  CHECK(h.recall(fabric, samples()).held == std::vector<std::uint8_t>{0, 1});
  h.update(fabric, scores(), forest(ibfx::kNoPort));
  CHECK(h.recall(fabric, samples()).held == std::vector<std::uint8_t>{0, 0});
  CHECK(h.size() == 0);
}

TEST_CASE("RootHistory follows ports by GUID and number, and forgets them", "[congestion]") {
  const auto fabric = two_ports();
  ibfx::RootHistory h;
  h.update(fabric, scores(), forest(0));
  // The same port at another index of a rediscovered fabric is still held.
  ibfx::Fabric swapped = fabric;
  std::swap(swapped.nodes[0].ports[0], swapped.nodes[0].ports[1]);
  CHECK(h.recall(swapped, samples()).held == std::vector<std::uint8_t>{0, 1});
  // Samples outside the fabric are never held.
  auto bad = samples();
  bad[0].node = 7;
  bad[1].port_index = 9;
  CHECK(h.recall(fabric, bad).held == std::vector<std::uint8_t>{0, 0});
  h.forget(ibfx::PortKey{0x10, 1});
  CHECK(h.recall(fabric, samples()).held == std::vector<std::uint8_t>{0, 0});
}
