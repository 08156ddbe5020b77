#include "test/sim/fabric_gen.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <stdexcept>
#include <string_view>

namespace ibfx::test {
namespace {

// ibsim limits: a node has 1..255 ports and its id is at most 64 characters
// (NODEIDLEN 65 with the terminator); longer ids are silently truncated,
// which would break the links that name them.
constexpr int kMaxPorts = 255;
constexpr std::size_t kMaxNameLength = 64;
// ibsim 0.10's default linear forwarding table holds LIDs below 30720; a
// fabric needing more must start ibsim with -L (unicast LIDs end at 0xBFFF).
constexpr int kDefaultLinearCap = 30720;
constexpr int kMaxLinearCap = 0xC000;

void require(bool condition, const std::string& message) {
  if (!condition) throw std::invalid_argument(message);
}

int ceil_div(int a, int b) { return (a + b - 1) / b; }

int digits(int n) {
  int d = 1;
  for (; n >= 10; n /= 10) ++d;
  return d;
}

// prefix + index zero-padded to `width` digits: numbered("gpu", 7, 4) = "gpu0007".
std::string numbered(const std::string& prefix, int index, int width) {
  std::string number = std::to_string(index);
  if (static_cast<int>(number.size()) < width) {
    number.insert(0, static_cast<std::size_t>(width) - number.size(), '0');
  }
  return prefix + number;
}

// Characters ibsim's parser or console treats specially.
void check_name_part(const std::string& what, const std::string& value) {
  require(!value.empty(), what + " must not be empty");
  for (char c : value) {
    require(c != '"' && c != '#' && c != '@' && static_cast<unsigned char>(c) >= 0x20,
            what + " must not contain '\"', '#', '@' or control characters: \"" + value + "\"");
  }
}

void check_counts(int servers, int rails) {
  require(servers >= 1, "servers must be >= 1 (got " + std::to_string(servers) + ")");
  require(rails >= 1, "rails must be >= 1 (got " + std::to_string(rails) + ")");
}

void check_radix(int radix) {
  require(radix >= 1 && radix <= kMaxPorts,
          "radix must be in [1, 255] (got " + std::to_string(radix) + ")");
}

void append_int(std::string& out, long long value) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);
  out.append(buf, end);
}

SimSizes with_headroom(long long nodes, long long switches, long long ports, long long lids) {
  // Headroom lets a test add a node or two (ibsim's Link command cannot,
  // but a caller may append records to the generated text).
  SimSizes sizes;
  sizes.nodes = static_cast<int>(nodes + nodes / 10 + 16);
  sizes.switches = static_cast<int>(switches + switches / 10 + 4);
  sizes.ports = static_cast<int>(ports + ports / 10 + 64);
  if (lids + 64 > kDefaultLinearCap) sizes.linear_cap = kMaxLinearCap;
  return sizes;
}

// splitmix64: fully specified, so a seed gives the same fabric with every
// standard library (std::uniform_int_distribution is not portable).
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(next() % n); }

 private:
  std::uint64_t state_;
};

// Cables the management HCA (node 0) to a spare port. Preference: a spine
// (keeps rail leaves pure), the storage leaf, a core, a rail-0 leaf. A fabric
// without any spare port gives up one link of `steal_role`'s last switch:
// real clusters always reserve a port for the UFM/SM host, and one missing
// uplink is harmless for the tests.
void place_mgmt(Fabric& fabric, int mgmt, int radix, NodeRole steal_role) {
  const int down_ports = radix / 2;
  const struct {
    NodeRole role;
    int last_port;
  } candidates[] = {{NodeRole::kSpine, radix},
                    {NodeRole::kStorageLeaf, down_ports},
                    {NodeRole::kCore, radix},
                    {NodeRole::kLeaf, down_ports}};
  for (const auto& candidate : candidates) {
    for (int i = 0; i < static_cast<int>(fabric.nodes().size()); ++i) {
      const FabricNode& node = fabric.node(i);
      if (node.role != candidate.role) continue;
      if (node.role == NodeRole::kLeaf && node.rail != 0) continue;
      const int port = fabric.free_port(i, 1, candidate.last_port);
      if (port > 0) {
        fabric.connect(mgmt, 1, i, port);
        return;
      }
    }
  }
  for (int i = static_cast<int>(fabric.nodes().size()) - 1; i >= 0; --i) {
    const FabricNode& node = fabric.node(i);
    if (node.role != steal_role) continue;
    for (int port = node.num_ports(); port >= 1; --port) {
      if (node.ports[static_cast<std::size_t>(port)].connected()) {
        fabric.disconnect(i, port);
        fabric.connect(mgmt, 1, i, port);
        return;
      }
    }
  }
  throw std::logic_error("fabric_gen: no port for the management HCA");
}

// True if every node that has at least one cable is reachable from node 0.
bool connected_fabric(const Fabric& fabric) {
  const auto& nodes = fabric.nodes();
  std::vector<char> seen(nodes.size(), 0);
  std::vector<int> stack{0};
  seen[0] = 1;
  while (!stack.empty()) {
    const int n = stack.back();
    stack.pop_back();
    for (const PortRef& peer : nodes[static_cast<std::size_t>(n)].ports) {
      if (peer.connected() && !seen[static_cast<std::size_t>(peer.node)]) {
        seen[static_cast<std::size_t>(peer.node)] = 1;
        stack.push_back(peer.node);
      }
    }
  }
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (seen[i]) continue;
    for (const PortRef& peer : nodes[i].ports) {
      if (peer.connected()) return false;
    }
  }
  return true;
}

}  // namespace

const char* to_string(NodeRole role) {
  switch (role) {
    case NodeRole::kServerHca:
      return "server_hca";
    case NodeRole::kStorageHca:
      return "storage_hca";
    case NodeRole::kMgmtHca:
      return "mgmt_hca";
    case NodeRole::kLeaf:
      return "leaf";
    case NodeRole::kStorageLeaf:
      return "storage_leaf";
    case NodeRole::kSpine:
      return "spine";
    case NodeRole::kCore:
      return "core";
    case NodeRole::kSwitch:
      return "switch";
  }
  return "unknown";
}

bool is_switch_role(NodeRole role) {
  switch (role) {
    case NodeRole::kServerHca:
    case NodeRole::kStorageHca:
    case NodeRole::kMgmtHca:
      return false;
    default:
      return true;
  }
}

bool valid_link_type(const std::string& link_type) {
  const std::size_t x = link_type.find('x');
  if (x == std::string::npos) return false;
  const std::string width = link_type.substr(0, x);
  const std::string speed = link_type.substr(x + 1);
  const bool width_ok =
      width == "1" || width == "2" || width == "4" || width == "8" || width == "12";
  const bool speed_ok = speed == "SDR" || speed == "DDR" || speed == "QDR" || speed == "FDR" ||
                        speed == "EDR" || speed == "HDR" || speed == "FDR10";
  return width_ok && speed_ok;
}

std::string hca_name(const std::string& host, int rail) {
  return host + " mlx5_" + std::to_string(rail);
}

std::vector<std::string> SimSizes::args() const {
  std::vector<std::string> out{"-N", std::to_string(nodes), "-S", std::to_string(switches),
                               "-P", std::to_string(ports)};
  if (linear_cap > 0) {
    out.push_back("-L");
    out.push_back(std::to_string(linear_cap));
  }
  return out;
}

std::string SimSizes::flags() const {
  std::string out;
  for (const std::string& arg : args()) {
    if (!out.empty()) out += ' ';
    out += arg;
  }
  return out;
}

SimSizes estimate_sizes(const std::string& netfile_text) {
  long long nodes = 0, switches = 0, ports = 0, lids = 0;
  std::string_view text(netfile_text);
  while (!text.empty()) {
    const std::size_t eol = text.find('\n');
    const std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    const bool is_switch = line.starts_with("Switch");
    const bool is_end = line.starts_with("Hca") || line.starts_with("Ca") || line.starts_with("Rt");
    if (!is_switch && !is_end) continue;
    // Same rule as ibsim: the port count is the first number after the keyword.
    std::size_t pos = is_switch ? 6 : (line.starts_with("Hca") ? 3 : 2);
    while (pos < line.size() && (line[pos] < '0' || line[pos] > '9')) ++pos;
    int count = 0;
    std::from_chars(line.data() + pos, line.data() + line.size(), count);
    ++nodes;
    if (is_switch) {
      ++switches;
      ports += count + 1;
      ++lids;
    } else {
      ports += count;
      lids += count;
    }
  }
  return with_headroom(nodes, switches, ports, lids);
}

int Fabric::add_node(std::string name, NodeRole role, int num_ports, int rail) {
  require(
      !name.empty() && name.size() <= kMaxNameLength,
      "node name must have 1.." + std::to_string(kMaxNameLength) + " characters: \"" + name + "\"");
  check_name_part("node name", name);
  require(num_ports >= 1 && num_ports <= kMaxPorts, "node \"" + name + "\" must have 1..255 ports");
  const int index = static_cast<int>(nodes_.size());
  require(index_.emplace(name, index).second, "duplicate node name \"" + name + "\"");
  FabricNode node;
  node.name = std::move(name);
  node.role = role;
  node.rail = rail;
  node.ports.resize(static_cast<std::size_t>(num_ports) + 1);
  nodes_.push_back(std::move(node));
  return index;
}

void Fabric::connect(int a, int port_a, int b, int port_b) {
  auto end = [this](int n, int p) -> PortRef& {
    if (n < 0 || n >= static_cast<int>(nodes_.size())) {
      throw std::logic_error("fabric_gen: bad node index " + std::to_string(n));
    }
    FabricNode& node = nodes_[static_cast<std::size_t>(n)];
    if (p < 1 || p > node.num_ports()) {
      throw std::logic_error("fabric_gen: port " + std::to_string(p) + " out of range on \"" +
                             node.name + "\"");
    }
    PortRef& ref = node.ports[static_cast<std::size_t>(p)];
    if (ref.connected()) {
      throw std::logic_error("fabric_gen: port " + std::to_string(p) + " of \"" + node.name +
                             "\" cabled twice");
    }
    return ref;
  };
  if (a == b && port_a == port_b) throw std::logic_error("fabric_gen: port cabled to itself");
  PortRef& end_a = end(a, port_a);
  PortRef& end_b = end(b, port_b);
  end_a = PortRef{b, port_b};
  end_b = PortRef{a, port_a};
}

void Fabric::disconnect(int node, int port) {
  PortRef& local =
      nodes_.at(static_cast<std::size_t>(node)).ports.at(static_cast<std::size_t>(port));
  if (!local.connected()) return;
  nodes_[static_cast<std::size_t>(local.node)].ports[static_cast<std::size_t>(local.port)] =
      PortRef{};
  local = PortRef{};
}

int Fabric::find(const std::string& name) const {
  const auto it = index_.find(name);
  return it == index_.end() ? -1 : it->second;
}

int Fabric::free_port(int node, int from, int to) const {
  const FabricNode& n = this->node(node);
  to = std::min(to, n.num_ports());
  for (int p = std::max(from, 1); p <= to; ++p) {
    if (!n.ports[static_cast<std::size_t>(p)].connected()) return p;
  }
  return -1;
}

std::size_t Fabric::count(NodeRole role) const {
  return static_cast<std::size_t>(std::count_if(
      nodes_.begin(), nodes_.end(), [role](const FabricNode& n) { return n.role == role; }));
}

std::size_t Fabric::switch_count() const {
  return static_cast<std::size_t>(std::count_if(nodes_.begin(), nodes_.end(),
                                                [](const FabricNode& n) { return n.is_switch(); }));
}

std::size_t Fabric::hca_count() const { return nodes_.size() - switch_count(); }

std::size_t Fabric::link_count() const {
  std::size_t ends = 0;
  for (const FabricNode& n : nodes_) {
    ends += static_cast<std::size_t>(std::count_if(n.ports.begin(), n.ports.end(),
                                                   [](const PortRef& p) { return p.connected(); }));
  }
  return ends / 2;
}

std::size_t Fabric::port_count() const {
  std::size_t ports = 0;
  for (const FabricNode& n : nodes_) {
    ports += static_cast<std::size_t>(n.num_ports()) + (n.is_switch() ? 1 : 0);
  }
  return ports;
}

SimSizes Fabric::sizes() const {
  long long lids = 0;
  for (const FabricNode& n : nodes_) lids += n.is_switch() ? 1 : n.num_ports();
  return with_headroom(static_cast<long long>(nodes_.size()),
                       static_cast<long long>(switch_count()), static_cast<long long>(port_count()),
                       lids);
}

std::string Fabric::to_netfile() const {
  if (!link_type.empty() && !valid_link_type(link_type)) {
    throw std::invalid_argument("invalid link type \"" + link_type + "\" (e.g. 4xHDR)");
  }
  // Parsed by ibsim as ibnetdiscover's connection data (see link_type).
  const std::string annotation = link_type.empty() ? std::string() : "\t# lid 0 " + link_type;
  std::string out;
  out.reserve(port_count() * (36 + annotation.size()) + nodes_.size() * 32 + 256);
  if (!description.empty()) {
    out += "# ";
    for (char c : description) out += c == '\n' ? ' ' : c;
    out += '\n';
  }
  out += "# ibsim ";
  out += sizes().flags();
  out += "\n\n";
  for (const FabricNode& n : nodes_) {
    out += n.is_switch() ? "Switch " : "Hca ";
    append_int(out, n.num_ports());
    out += " \"";
    out += n.name;
    out += "\"\n";
    for (int p = 1; p <= n.num_ports(); ++p) {
      const PortRef& peer = n.ports[static_cast<std::size_t>(p)];
      if (!peer.connected()) continue;
      out += '[';
      append_int(out, p);
      out += "] \"";
      out += nodes_[static_cast<std::size_t>(peer.node)].name;
      out += "\"[";
      append_int(out, peer.port);
      out += ']';
      out += annotation;
      out += '\n';
    }
    out += '\n';
  }
  return out;
}

void Fabric::write_netfile(const std::string& path) const {
  const std::string text = to_netfile();
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(text.data(), static_cast<std::streamsize>(text.size()));
  file.close();
  if (!file) throw std::runtime_error("cannot write net file " + path);
}

// Wiring of the rail-optimized fat tree. With d = radix / 2:
//
// Leaves. Each rail has ceil(servers / d) leaves "leaf-r<rail>-NN"; server s
// cables its HCA "mlx5_<rail>" to port (s % d) + 1 of leaf s / d of that
// rail, so a leaf only ever carries one rail (what makes the fabric
// rail-optimized: same-rail traffic between servers of one leaf never leaves
// it). Storage nodes fill leaves "leaf-stor-NN" the same way. Ports d+1..radix
// of every leaf are uplinks.
//
// 2 tiers. One group of S spines shared by all rails, S the smallest divisor
// of d whose spines have room for every leaf (leaves * d / S <= radix, one
// port to spare for the management HCA if possible). Each leaf runs d / S
// parallel links to every spine: leaf port d + 1 + s*(d/S) + k goes to port
// t*(d/S) + k + 1 of spine s (t = leaf index). At most `radix` leaves fit.
//
// 3 tiers: the classic k-ary fat tree generalized to fewer pods. Leaves are
// taken in order (rail-major, so with >= d leaves per rail a pod is
// rail-local, like the per-rail spine groups of NVIDIA's reference designs)
// d per pod; a pod has d spines and leaf i of a pod cables uplink j to port
// i + 1 of the pod's spine j (full bipartite leaf/spine in the pod). Spine
// ports 1..d face leaves, d+1..radix face cores. Cores are split into d/m
// planes of d cores each; spine j of every pod belongs to plane j / m and
// cables uplink c to core c of its plane. m is the largest divisor of d with
// m * pods <= radix, so each core port meets one spine (no parallel links) and
// the core count is as small as possible: the 16k preset (16 pods) gives m = 4,
// 8 planes, 256 cores; the textbook case (radix pods) gives m = 1 and d^2 cores.
// At most radix pods fit, i.e. radix * d leaves.
Fabric make_fat_tree(const FatTreeSpec& spec) {
  check_counts(spec.servers, spec.rails);
  require(spec.tiers == 2 || spec.tiers == 3,
          "tiers must be 2 or 3 (got " + std::to_string(spec.tiers) + ")");
  require(spec.radix >= 4 && spec.radix <= 254 && spec.radix % 2 == 0,
          "radix must be even and in [4, 254] (got " + std::to_string(spec.radix) + ")");
  require(spec.storage_nodes >= 0,
          "storage_nodes must be >= 0 (got " + std::to_string(spec.storage_nodes) + ")");
  check_name_part("host_prefix", spec.host_prefix);
  check_name_part("storage_prefix", spec.storage_prefix);
  check_name_part("mgmt_host", spec.mgmt_host);
  check_name_part("leaf_prefix", spec.leaf_prefix);
  check_name_part("spine_prefix", spec.spine_prefix);
  check_name_part("core_prefix", spec.core_prefix);

  const int radix = spec.radix;
  const int d = radix / 2;
  const int leaves_per_rail = ceil_div(spec.servers, d);
  const int storage_leaves = ceil_div(spec.storage_nodes, d);
  const long long total_leaves_ll =
      static_cast<long long>(spec.rails) * leaves_per_rail + storage_leaves;
  require(total_leaves_ll <= static_cast<long long>(radix) * d,
          "fabric needs " + std::to_string(total_leaves_ll) + " leaves; radix " +
              std::to_string(radix) + " holds at most " + std::to_string(radix * d));
  const int total_leaves = static_cast<int>(total_leaves_ll);

  int spines_2tier = 0;
  if (spec.tiers == 2) {
    for (int spare : {1, 0}) {
      for (int s = 1; s <= d && spines_2tier == 0; ++s) {
        if (d % s == 0 && static_cast<long long>(total_leaves) * (d / s) <= radix - spare) {
          spines_2tier = s;
        }
      }
      if (spines_2tier != 0) break;
    }
    require(spines_2tier != 0, "2-tier fat tree: " + std::to_string(total_leaves) +
                                   " leaves do not fit on spines of radix " +
                                   std::to_string(radix) + " (at most " + std::to_string(radix) +
                                   "); use tiers=3");
  }

  Fabric fabric;
  fabric.description = "fattree servers=" + std::to_string(spec.servers) +
                       " rails=" + std::to_string(spec.rails) +
                       " tiers=" + std::to_string(spec.tiers) + " radix=" + std::to_string(radix) +
                       " storage=" + std::to_string(spec.storage_nodes);
  // ibsim attaches every client to the first node of the file.
  const int mgmt = fabric.add_node(hca_name(spec.mgmt_host, 0), NodeRole::kMgmtHca, 1);

  std::vector<int> leaves;
  leaves.reserve(static_cast<std::size_t>(total_leaves));
  const int leaf_width = std::max(2, digits(leaves_per_rail));
  for (int r = 0; r < spec.rails; ++r) {
    for (int i = 0; i < leaves_per_rail; ++i) {
      leaves.push_back(fabric.add_node(
          numbered(spec.leaf_prefix + "-r" + std::to_string(r) + "-", i + 1, leaf_width),
          NodeRole::kLeaf, radix, r));
    }
  }
  for (int i = 0; i < storage_leaves; ++i) {
    leaves.push_back(fabric.add_node(
        numbered(spec.leaf_prefix + "-stor-", i + 1, std::max(2, digits(storage_leaves))),
        NodeRole::kStorageLeaf, radix));
  }

  if (spec.tiers == 2) {
    const int spine_count = spines_2tier;
    const int width = d / spine_count;  // parallel links per leaf/spine pair
    std::vector<int> spines;
    for (int s = 0; s < spine_count; ++s) {
      spines.push_back(fabric.add_node(
          numbered(spec.spine_prefix + "-", s + 1, std::max(2, digits(spine_count))),
          NodeRole::kSpine, radix));
    }
    for (int t = 0; t < total_leaves; ++t) {
      for (int s = 0; s < spine_count; ++s) {
        for (int k = 0; k < width; ++k) {
          fabric.connect(leaves[static_cast<std::size_t>(t)], d + 1 + s * width + k,
                         spines[static_cast<std::size_t>(s)], t * width + k + 1);
        }
      }
    }
  } else {
    const int pods = ceil_div(total_leaves, d);
    int m = 1;
    for (int candidate = d; candidate >= 1; --candidate) {
      if (d % candidate == 0 && candidate * pods <= radix) {
        m = candidate;
        break;
      }
    }
    const int planes = d / m;
    const int spine_count = pods * d;
    const int core_count = planes * d;
    std::vector<int> spines;
    std::vector<int> cores;
    spines.reserve(static_cast<std::size_t>(spine_count));
    cores.reserve(static_cast<std::size_t>(core_count));
    for (int s = 0; s < spine_count; ++s) {
      spines.push_back(fabric.add_node(
          numbered(spec.spine_prefix + "-", s + 1, std::max(2, digits(spine_count))),
          NodeRole::kSpine, radix));
    }
    for (int c = 0; c < core_count; ++c) {
      cores.push_back(
          fabric.add_node(numbered(spec.core_prefix + "-", c + 1, std::max(2, digits(core_count))),
                          NodeRole::kCore, radix));
    }
    for (int t = 0; t < total_leaves; ++t) {
      const int pod = t / d;
      const int position = t % d;
      for (int j = 0; j < d; ++j) {
        fabric.connect(leaves[static_cast<std::size_t>(t)], d + 1 + j,
                       spines[static_cast<std::size_t>(pod * d + j)], position + 1);
      }
    }
    for (int pod = 0; pod < pods; ++pod) {
      for (int j = 0; j < d; ++j) {
        const int plane = j / m;
        const int in_plane = j % m;
        for (int c = 0; c < d; ++c) {
          fabric.connect(spines[static_cast<std::size_t>(pod * d + j)], d + 1 + c,
                         cores[static_cast<std::size_t>(plane * d + c)], pod * m + in_plane + 1);
        }
      }
    }
  }

  const int host_width = std::max(4, digits(spec.servers));
  for (int s = 0; s < spec.servers; ++s) {
    const std::string host = numbered(spec.host_prefix, s + 1, host_width);
    for (int r = 0; r < spec.rails; ++r) {
      const int hca = fabric.add_node(hca_name(host, r), NodeRole::kServerHca, 1, r);
      fabric.connect(hca, 1, leaves[static_cast<std::size_t>(r * leaves_per_rail + s / d)],
                     s % d + 1);
    }
  }
  const int storage_width = std::max(2, digits(spec.storage_nodes));
  for (int k = 0; k < spec.storage_nodes; ++k) {
    const int hca = fabric.add_node(
        hca_name(numbered(spec.storage_prefix, k + 1, storage_width), 0), NodeRole::kStorageHca, 1);
    fabric.connect(hca, 1, leaves[static_cast<std::size_t>(spec.rails * leaves_per_rail + k / d)],
                   k % d + 1);
  }

  place_mgmt(fabric, mgmt, radix, spec.tiers == 2 ? NodeRole::kSpine : NodeRole::kCore);
  return fabric;
}

Fabric make_ring(const RingSpec& spec) {
  check_counts(spec.servers, spec.rails);
  check_radix(spec.radix);
  require(spec.switches >= 3,
          "a ring needs >= 3 switches (got " + std::to_string(spec.switches) + ")");
  check_name_part("host_prefix", spec.host_prefix);
  check_name_part("switch_prefix", spec.switch_prefix);
  check_name_part("mgmt_host", spec.mgmt_host);
  const int per_switch = ceil_div(spec.servers, spec.switches);
  // Two ring ports, the HCAs, and the management HCA on the first switch.
  require(2 + per_switch * spec.rails + 1 <= spec.radix,
          "ring: radix " + std::to_string(spec.radix) + " too small for " +
              std::to_string(per_switch * spec.rails) + " HCAs per switch + 2 ring ports + mgmt");

  Fabric fabric;
  fabric.description = "ring switches=" + std::to_string(spec.switches) +
                       " servers=" + std::to_string(spec.servers) +
                       " rails=" + std::to_string(spec.rails) +
                       " radix=" + std::to_string(spec.radix);
  const int mgmt = fabric.add_node(hca_name(spec.mgmt_host, 0), NodeRole::kMgmtHca, 1);
  std::vector<int> switches;
  for (int i = 0; i < spec.switches; ++i) {
    switches.push_back(fabric.add_node(
        numbered(spec.switch_prefix + "-", i + 1, std::max(2, digits(spec.switches))),
        NodeRole::kSwitch, spec.radix));
  }
  for (int i = 0; i < spec.switches; ++i) {
    fabric.connect(switches[static_cast<std::size_t>(i)], 1,
                   switches[static_cast<std::size_t>((i + 1) % spec.switches)], 2);
  }
  const int host_width = std::max(4, digits(spec.servers));
  for (int s = 0; s < spec.servers; ++s) {
    const std::string host = numbered(spec.host_prefix, s + 1, host_width);
    for (int r = 0; r < spec.rails; ++r) {
      const int hca = fabric.add_node(hca_name(host, r), NodeRole::kServerHca, 1, r);
      fabric.connect(hca, 1, switches[static_cast<std::size_t>(s / per_switch)],
                     3 + (s % per_switch) * spec.rails + r);
    }
  }
  fabric.connect(mgmt, 1, switches[0], fabric.free_port(switches[0], 3, spec.radix));
  return fabric;
}

Fabric make_single_switch(const SingleSwitchSpec& spec) {
  check_counts(spec.servers, spec.rails);
  check_radix(spec.radix);
  check_name_part("host_prefix", spec.host_prefix);
  check_name_part("switch_name", spec.switch_name);
  check_name_part("mgmt_host", spec.mgmt_host);
  require(static_cast<long long>(spec.servers) * spec.rails + 1 <= spec.radix,
          "single switch: radix " + std::to_string(spec.radix) + " too small for " +
              std::to_string(static_cast<long long>(spec.servers) * spec.rails) + " HCAs + mgmt");

  Fabric fabric;
  fabric.description = "single servers=" + std::to_string(spec.servers) +
                       " rails=" + std::to_string(spec.rails) +
                       " radix=" + std::to_string(spec.radix);
  const int mgmt = fabric.add_node(hca_name(spec.mgmt_host, 0), NodeRole::kMgmtHca, 1);
  const int sw = fabric.add_node(spec.switch_name, NodeRole::kSwitch, spec.radix);
  const int host_width = std::max(4, digits(spec.servers));
  int port = 1;
  for (int s = 0; s < spec.servers; ++s) {
    const std::string host = numbered(spec.host_prefix, s + 1, host_width);
    for (int r = 0; r < spec.rails; ++r) {
      fabric.connect(fabric.add_node(hca_name(host, r), NodeRole::kServerHca, 1, r), 1, sw, port++);
    }
  }
  fabric.connect(mgmt, 1, sw, port);
  return fabric;
}

Fabric make_irregular(const IrregularSpec& spec) {
  require(spec.removed_links >= 0,
          "removed_links must be >= 0 (got " + std::to_string(spec.removed_links) + ")");
  require(!spec.miscable || spec.base.rails >= 2, "miscabling needs >= 2 rails");
  Fabric fabric = make_fat_tree(spec.base);
  Rng rng(spec.seed);
  const int down_ports = spec.base.radix / 2;
  const auto& nodes = fabric.nodes();
  auto port_name = [&fabric](int node, int port) { return PortName{fabric.node(node).name, port}; };

  if (spec.miscable) {
    std::vector<int> hcas;
    for (int i = 0; i < static_cast<int>(nodes.size()); ++i) {
      if (nodes[static_cast<std::size_t>(i)].role == NodeRole::kServerHca) hcas.push_back(i);
    }
    const int hca = hcas[rng.below(hcas.size())];
    const int wrong_rail = (fabric.node(hca).rail + 1) % spec.base.rails;
    std::vector<int> spare_leaves;
    for (int i = 0; i < static_cast<int>(nodes.size()); ++i) {
      const FabricNode& n = nodes[static_cast<std::size_t>(i)];
      if (n.role == NodeRole::kLeaf && n.rail == wrong_rail &&
          fabric.free_port(i, 1, down_ports) > 0) {
        spare_leaves.push_back(i);
      }
    }
    PortRef target;
    if (!spare_leaves.empty()) {
      const int leaf = spare_leaves[rng.below(spare_leaves.size())];
      target = PortRef{leaf, fabric.free_port(leaf, 1, down_ports)};
    } else {
      // No free port on the wrong rail: the miscabled HCA takes the port of
      // an HCA of that rail, which stays uncabled (a second, common fault).
      std::vector<int> victims;
      for (int i : hcas) {
        if (fabric.node(i).rail == wrong_rail) victims.push_back(i);
      }
      const int victim = victims[rng.below(victims.size())];
      target = fabric.node(victim).ports[1];
      fabric.removed_links.emplace_back(port_name(victim, 1), port_name(target.node, target.port));
      fabric.disconnect(victim, 1);
    }
    fabric.disconnect(hca, 1);
    fabric.connect(hca, 1, target.node, target.port);
    fabric.miscabled_hca = fabric.node(hca).name;
  }

  if (spec.removed_links > 0) {
    // Switch-to-switch links, each once (from its lower end).
    std::vector<PortRef> links;
    for (int i = 0; i < static_cast<int>(nodes.size()); ++i) {
      const FabricNode& n = nodes[static_cast<std::size_t>(i)];
      if (!n.is_switch()) continue;
      for (int p = 1; p <= n.num_ports(); ++p) {
        const PortRef& peer = n.ports[static_cast<std::size_t>(p)];
        if (peer.connected() && fabric.node(peer.node).is_switch() &&
            (peer.node > i || (peer.node == i && peer.port > p))) {
          links.push_back(PortRef{i, p});
        }
      }
    }
    int removed = 0;
    while (removed < spec.removed_links && !links.empty()) {
      const std::size_t pick = rng.below(links.size());
      const PortRef end = links[pick];
      links[pick] = links.back();
      links.pop_back();
      const PortRef peer = fabric.node(end.node).ports[static_cast<std::size_t>(end.port)];
      fabric.disconnect(end.node, end.port);
      if (!connected_fabric(fabric)) {
        fabric.connect(end.node, end.port, peer.node, peer.port);
        continue;
      }
      fabric.removed_links.emplace_back(port_name(end.node, end.port),
                                        port_name(peer.node, peer.port));
      ++removed;
    }
    require(removed == spec.removed_links, "cannot remove " + std::to_string(spec.removed_links) +
                                               " links without disconnecting the fabric (removed " +
                                               std::to_string(removed) + ")");
  }

  fabric.description = "irregular " + fabric.description +
                       " removed_links=" + std::to_string(spec.removed_links) + " miscabled=\"" +
                       fabric.miscabled_hca + "\" seed=" + std::to_string(spec.seed);
  return fabric;
}

FatTreeSpec preset_16k() {
  FatTreeSpec spec;
  spec.servers = 2048;
  spec.rails = 8;
  spec.tiers = 3;
  spec.radix = 64;
  return spec;
}

}  // namespace ibfx::test
