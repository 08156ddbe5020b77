#include "discovery/fabric_merger.h"

#include <algorithm>
#include <utility>

namespace ibfx {

namespace {

std::uint64_t remote_guid(const Fabric& f, const FabricPort& p) {
  return p.linked() ? f.nodes[static_cast<std::size_t>(p.remote_node)].guid : 0;
}

// PortInfo.PortPhysicalState (IBA 14.2.5.6) 5 = LinkUp: the cable is there
// and trained, whatever the discovery managed to learn about the far end.
constexpr std::uint8_t kPhysLinkUp = 5;

// merge's steps for a node both the discovery and the known fabric have:
// each keeps what the discovery lost and the known fabric still knows.
// `links` runs parallel to node.ports: the remote GUID of each port.

// Its NodeDescription SMP was lost: the name (a label of every series of the
// node) stays what it was. A switch whose port 0 PortInfo was lost comes
// without its LID (and so do its ports, which answer at it): keep the one it
// had, and its LMC (port 0's too, IBA 14.2.5.6). Should the SM have given
// that LID to another node meanwhile, the sweep's NodeInfo check drops the
// readings.
void keep_name_and_lid(FabricNode& node, const FabricNode& before) {
  if (node.description.empty()) node.description = before.description;
  if (node.lid != 0 || before.lid == 0) return;
  node.lid = before.lid;
  if (node.type != NodeType::kSwitch) return;
  const std::uint8_t lmc = before.ports.empty() ? 0 : before.ports.front().lmc;
  for (FabricPort& p : node.ports) {
    if (p.lid != 0) continue;
    p.lid = before.lid;
    p.lmc = lmc;
  }
}

// A reported port whose PortInfo was lost keeps its old properties; one that
// is cabled and up but whose neighbour did not answer keeps its old link.
void keep_lost_port_info(FabricNode& node, std::vector<std::uint64_t>& links,
                         const FabricNode& before, const Fabric& known) {
  for (std::size_t i = 0; i < node.ports.size(); ++i) {
    FabricPort& p = node.ports[i];
    if (p.state == 0) {
      // Reached as the far end of a link, but its own PortInfo SMP was
      // lost: PortState 0 is no state at all (IBA 14.2.5.6 reports 1-4).
      // Keep the link properties it had rather than blank ones.
      for (const FabricPort& old : before.ports) {
        if (old.number != p.number) continue;
        const FabricPort seen_port = p;
        p = old;
        // The LID and its LMC are read together (a switch's from
        // port 0, which may have answered): what was seen wins.
        if (seen_port.lid != 0) {
          p.lid = seen_port.lid;
          p.lmc = seen_port.lmc;
        }
        if (seen_port.linked()) {
          p.remote_node = seen_port.remote_node;
          p.remote_port = seen_port.remote_port;
        } else {
          links[i] = remote_guid(known, old);
        }
      }
      continue;
    }
    if (links[i] != 0 || p.phys_state != kPhysLinkUp) continue;
    // Cabled and up, but the neighbour did not answer this time.
    for (const FabricPort& old : before.ports) {
      if (old.number == p.number && old.linked()) {
        links[i] = remote_guid(known, old);
        p.remote_port = old.remote_port;
      }
    }
  }
}

// Ports the discovery did not report at all are kept as they were; returns
// how many.
std::size_t keep_unreported_ports(FabricNode& node, std::vector<std::uint64_t>& links,
                                  const FabricNode& before, const Fabric& known) {
  std::size_t kept = 0;
  for (const FabricPort& old : before.ports) {
    const bool reported = std::any_of(node.ports.begin(), node.ports.end(),
                                      [&](const FabricPort& p) { return p.number == old.number; });
    if (reported) continue;
    node.ports.push_back(old);
    links.push_back(remote_guid(known, old));
    ++kept;
  }
  return kept;
}

// Ascending port numbers, as discovery delivers them.
void sort_ports(FabricNode& node, std::vector<std::uint64_t>& links) {
  std::vector<std::size_t> order(node.ports.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return node.ports[a].number < node.ports[b].number;
  });
  std::vector<FabricPort> ports;
  std::vector<std::uint64_t> sorted_links;
  for (std::size_t i : order) {
    ports.push_back(node.ports[i]);
    sorted_links.push_back(links[i]);
  }
  node.ports = std::move(ports);
  links = std::move(sorted_links);
}

// A kept node's port whose far end this discovery saw down is down too: the
// cable is unplugged (or the peer's port disabled), whatever the unreachable
// node would say.
void mark_unplugged_links(Fabric& merged) {
  for (FabricNode& node : merged.nodes) {
    if (node.present) continue;
    for (FabricPort& p : node.ports) {
      if (!p.linked()) continue;
      const FabricNode& peer = merged.nodes[static_cast<std::size_t>(p.remote_node)];
      if (!peer.present) continue;
      for (const FabricPort& far : peer.ports) {
        if (far.number == p.remote_port && !far.up()) {
          p.state = far.state;
          p.phys_state = far.phys_state;
        }
      }
    }
  }
}

}  // namespace

FabricMerger::FabricMerger(ForgetPolicy policy) : policy_(policy) {}

void FabricMerger::set_policy(const ForgetPolicy& policy) {
  std::lock_guard lock(mu_);
  policy_ = policy;
}

ForgetPolicy FabricMerger::policy() const {
  std::lock_guard lock(mu_);
  return policy_;
}

std::shared_ptr<const Fabric> FabricMerger::current() const {
  std::lock_guard lock(mu_);
  return known_;
}

std::size_t FabricMerger::missing() const {
  std::lock_guard lock(mu_);
  return missing_.size();
}

std::vector<ForgottenNode> FabricMerger::take_forgotten() {
  std::lock_guard lock(mu_);
  return std::exchange(forgotten_, {});
}

void FabricMerger::note_answered(std::uint64_t guid) {
  std::lock_guard lock(mu_);
  auto it = missing_.find(guid);
  if (it == missing_.end()) return;
  it->second.discoveries = 0;
  it->second.since = Clock::now();
}

// The merged fabric while it is built: its nodes, and each port's remote
// GUID. Links are resolved by GUID once the node list is final: the
// discovery and the known fabric number their nodes differently.
struct FabricMerger::Draft {
  std::shared_ptr<Fabric> fabric = std::make_shared<Fabric>();
  std::vector<std::vector<std::uint64_t>> remotes;

  void add(FabricNode node, std::vector<std::uint64_t> links) {
    fabric->nodes.push_back(std::move(node));
    remotes.push_back(std::move(links));
  }

  // Each port's remote_node from its remote GUID, now that the node list is
  // final; a GUID no longer in it leaves the port unlinked.
  void resolve_links() {
    Fabric& merged = *fabric;
    for (std::size_t n = 0; n < merged.nodes.size(); ++n) {
      auto& ports = merged.nodes[n].ports;
      for (std::size_t i = 0; i < ports.size(); ++i) {
        auto it = remotes[n][i] != 0 ? merged.by_guid.find(remotes[n][i]) : merged.by_guid.end();
        if (it == merged.by_guid.end()) {
          ports[i].remote_node = kNoNode;
          ports[i].remote_port = 0;
        } else {
          ports[i].remote_node = it->second;
        }
      }
    }
  }
};

MergeOutcome FabricMerger::merge(const Fabric& discovered, Clock::time_point now) {
  std::lock_guard lock(mu_);
  MergeOutcome out;
  Draft draft = start_draft(discovered);
  add_seen_nodes(discovered, draft, out);
  if (known_) {
    keep_missing_nodes(*known_, draft, now, out);
    draft.fabric->index();
  }
  draft.resolve_links();
  mark_unplugged_links(*draft.fabric);
  known_ = draft.fabric;
  last_merge_ = now;
  out.fabric = std::move(draft.fabric);
  return out;
}

// The discovery's own facts (when, how long, SMP counts, the local port) and
// room for every node either side knows.
FabricMerger::Draft FabricMerger::start_draft(const Fabric& discovered) const {
  Draft draft;
  Fabric& merged = *draft.fabric;
  merged.discovered_at = discovered.discovered_at;
  merged.discovery_seconds = discovered.discovery_seconds;
  merged.smp_timeouts = discovered.smp_timeouts;
  merged.smp_errors = discovered.smp_errors;
  merged.local_node = discovered.local_node;
  merged.sm_lid = discovered.sm_lid;
  merged.local_port_state = discovered.local_port_state;
  merged.nodes.reserve(std::max(discovered.nodes.size(), known_ ? known_->nodes.size() : 0));
  draft.remotes.reserve(merged.nodes.capacity());
  return draft;
}

// Every node the discovery found, as it says, completed from the known
// fabric where the discovery lost something; then indexed by GUID.
void FabricMerger::add_seen_nodes(const Fabric& discovered, Draft& draft, MergeOutcome& out) {
  const Fabric* known = known_.get();
  for (const FabricNode& seen : discovered.nodes) {
    FabricNode node = seen;
    node.present = true;
    std::vector<std::uint64_t> links;
    links.reserve(node.ports.size());
    for (const FabricPort& p : node.ports) links.push_back(remote_guid(discovered, p));
    missing_.erase(seen.guid);
    const FabricNode* before = known ? known->find(seen.guid) : nullptr;
    if (before != nullptr) {
      keep_name_and_lid(node, *before);
      keep_lost_port_info(node, links, *before, *known);
      out.ports_kept += keep_unreported_ports(node, links, *before, *known);
      sort_ports(node, links);
    }
    draft.add(std::move(node), std::move(links));
    ++out.seen;
  }
  draft.fabric->index();
}

// Known nodes the discovery did not find: forgotten once the policy says so,
// else kept as last seen, LID included, so that the sweep still asks them.
void FabricMerger::keep_missing_nodes(const Fabric& known, Draft& draft, Clock::time_point now,
                                      MergeOutcome& out) {
  for (const FabricNode& old : known.nodes) {
    if (draft.fabric->by_guid.count(old.guid) != 0) continue;
    const auto last_seen = last_merge_ != Clock::time_point{} ? last_merge_ : now;
    Missing& m = missing_.try_emplace(old.guid, Missing{0, last_seen}).first->second;
    ++m.discoveries;
    if (m.discoveries >= policy_.discoveries && now - m.since >= policy_.after) {
      ForgottenNode gone{old.guid, old.description, old.type, {}};
      for (const FabricPort& p : old.ports) gone.ports.push_back(p.number);
      out.forgotten.push_back(gone);
      forgotten_.push_back(std::move(gone));
      missing_.erase(old.guid);
      continue;
    }
    FabricNode node = old;
    node.present = false;
    std::vector<std::uint64_t> links;
    for (const FabricPort& p : node.ports) links.push_back(remote_guid(known, p));
    draft.add(std::move(node), std::move(links));
    ++out.missing;
  }
}

}  // namespace ibfx
