// What every renderer needs from one snapshot: the label strings of each
// node and port, tier and rail by node, which ports' counters are exported,
// and where each analysed port sits.
//
// The label strings depend only on the fabric, its node names and its
// topology, which change with a discovery, not with a sweep: they are built
// once per discovery into one buffer (FabricLabels) and shared by every
// snapshot, every group and every render of that fabric. At 98k ports and
// one sweep a second, building them per render (98k strings, 3 times per
// snapshot) was a fifth of the render (issue #19).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ibfx {

struct Snapshot;
struct Fabric;

// Label strings of one fabric (+ names + topology), in one buffer each.
struct FabricLabels {
  // Slot of port p of node n: first_slot[n] + p (first_slot has nodes + 1 entries).
  std::vector<std::uint32_t> first_slot;
  // node_guid="..." by node; node_guid="...",port="N" and the
  // infiniband_port_info labels by slot. Entry k of each is
  // text[end[k - 1], end[k]) (end[-1] = 0).
  std::string node_text, port_text, info_text;
  std::vector<std::uint32_t> node_end, port_end, info_end;
  std::uint64_t fingerprint = 0;  // of everything the strings were made from

  std::string_view node(std::size_t n) const { return piece(node_text, node_end, n); }
  std::string_view port(std::size_t slot) const { return piece(port_text, port_end, slot); }
  std::string_view info(std::size_t slot) const { return piece(info_text, info_end, slot); }

 private:
  static std::string_view piece(const std::string& text, const std::vector<std::uint32_t>& end,
                                std::size_t k) {
    const std::uint32_t from = k == 0 ? 0 : end[k - 1];
    return std::string_view(text).substr(from, end[k] - from);
  }
};

class RenderContext {
 public:
  explicit RenderContext(const Snapshot& snapshot);

  const Snapshot& snapshot() const { return s_; }
  const Fabric& fabric() const { return *fabric_; }

  // node_guid="..." : the identity of a node's per-node series.
  std::string_view node_id(std::size_t n) const { return labels_->node(n); }
  // node_guid="...",port="N" : the identity of a port's per-port series
  // (index into Snapshot::ports).
  std::string_view port_id(std::size_t i) const { return labels_->port(slot_[i]); }
  // port_id + link_width, link_speed and the far end (remote_node_guid,
  // remote_node_name, remote_port, remote_node_type, remote_tier): the
  // labels of infiniband_port_info.
  std::string_view port_info_labels(std::size_t i) const { return labels_->info(slot_[i]); }
  // port_id of every port, parallel to Snapshot::ports.
  std::vector<std::string_view> port_ids() const;
  // node_guid, node_name, node_type: for the few series per node or port
  // that are read without a join (scores, roots, topology findings).
  std::string node_named(std::size_t n) const;
  // node_named + port, tier, rail of one port.
  std::string port_named(std::size_t i) const;

  std::string_view tier_of(std::size_t n) const;
  std::string rail_of(std::size_t n) const;

  // Whether the per-port counters of port view `i` are exported (config `export:`).
  bool port_exported(std::size_t i) const;
  // The port view index of an analysed (node, port index), -1 when absent.
  std::int64_t view_of(std::int32_t node, std::uint32_t port_index) const;

  // The labels of `snapshot`'s fabric: built on first use, then the same
  // object for every snapshot of that fabric with the same names and
  // topology. Thread-safe.
  static std::shared_ptr<const FabricLabels> labels(const Snapshot& snapshot);

 private:
  const Snapshot& s_;
  const Fabric* fabric_;
  std::shared_ptr<const FabricLabels> labels_;
  std::vector<std::uint32_t> slot_;  // by port view: its slot in labels_
  std::vector<std::int32_t> view_;   // by slot: the port view index, -1 (analysed snapshots only)
};

}  // namespace ibfx
