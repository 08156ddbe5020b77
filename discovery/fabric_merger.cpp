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

MergeOutcome FabricMerger::merge(const Fabric& discovered, Clock::time_point now) {
  std::lock_guard lock(mu_);
  MergeOutcome out;
  auto merged = std::make_shared<Fabric>();
  merged->discovered_at = discovered.discovered_at;
  merged->discovery_seconds = discovered.discovery_seconds;
  merged->smp_timeouts = discovered.smp_timeouts;
  merged->smp_errors = discovered.smp_errors;
  merged->local_node = discovered.local_node;
  merged->sm_lid = discovered.sm_lid;
  merged->local_port_state = discovered.local_port_state;
  merged->nodes.reserve(std::max(discovered.nodes.size(), known_ ? known_->nodes.size() : 0));
  // Links are resolved by GUID once the node list is final: the two sources
  // number their nodes differently.
  std::vector<std::vector<std::uint64_t>> remotes;
  remotes.reserve(merged->nodes.capacity());
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
      // Its NodeDescription SMP was lost: the name (a label of every series
      // of the node) stays what it was.
      if (node.description.empty()) node.description = before->description;
      // A switch whose port 0 PortInfo was lost comes without its LID (and
      // so do its ports, which answer at it): keep the one it had, and its
      // LMC (port 0's too, IBA 14.2.5.6). Should the SM have given that LID
      // to another node meanwhile, the sweep's NodeInfo check drops the
      // readings.
      if (node.lid == 0 && before->lid != 0) {
        node.lid = before->lid;
        if (node.type == NodeType::kSwitch) {
          const std::uint8_t lmc = before->ports.empty() ? 0 : before->ports.front().lmc;
          for (FabricPort& p : node.ports) {
            if (p.lid != 0) continue;
            p.lid = before->lid;
            p.lmc = lmc;
          }
        }
      }
      for (std::size_t i = 0; i < node.ports.size(); ++i) {
        FabricPort& p = node.ports[i];
        if (p.state == 0) {
          // Reached as the far end of a link, but its own PortInfo SMP was
          // lost: PortState 0 is no state at all (IBA 14.2.5.6 reports 1-4).
          // Keep the link properties it had rather than blank ones.
          for (const FabricPort& old : before->ports) {
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
              links[i] = remote_guid(*known, old);
            }
          }
          continue;
        }
        if (links[i] != 0 || p.phys_state != kPhysLinkUp) continue;
        // Cabled and up, but the neighbour did not answer this time.
        for (const FabricPort& old : before->ports) {
          if (old.number == p.number && old.linked()) {
            links[i] = remote_guid(*known, old);
            p.remote_port = old.remote_port;
          }
        }
      }
      for (const FabricPort& old : before->ports) {
        const bool reported =
            std::any_of(node.ports.begin(), node.ports.end(),
                        [&](const FabricPort& p) { return p.number == old.number; });
        if (reported) continue;
        node.ports.push_back(old);
        links.push_back(remote_guid(*known, old));
        ++out.ports_kept;
      }
      // Ascending port numbers, as discovery delivers them.
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
    merged->nodes.push_back(std::move(node));
    remotes.push_back(std::move(links));
    ++out.seen;
  }
  merged->index();

  if (known != nullptr) {
    for (const FabricNode& old : known->nodes) {
      if (merged->by_guid.count(old.guid) != 0) continue;
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
      // Kept as last seen, LID included, so that the sweep still asks it.
      FabricNode node = old;
      node.present = false;
      std::vector<std::uint64_t> links;
      for (const FabricPort& p : node.ports) links.push_back(remote_guid(*known, p));
      merged->nodes.push_back(std::move(node));
      remotes.push_back(std::move(links));
      ++out.missing;
    }
    merged->index();
  }

  for (std::size_t n = 0; n < merged->nodes.size(); ++n) {
    auto& ports = merged->nodes[n].ports;
    for (std::size_t i = 0; i < ports.size(); ++i) {
      auto it = remotes[n][i] != 0 ? merged->by_guid.find(remotes[n][i]) : merged->by_guid.end();
      if (it == merged->by_guid.end()) {
        ports[i].remote_node = kNoNode;
        ports[i].remote_port = 0;
      } else {
        ports[i].remote_node = it->second;
      }
    }
  }
  // A kept node's port whose far end this discovery saw down is down too:
  // the cable is unplugged (or the peer's port disabled), whatever the
  // unreachable node would say.
  for (FabricNode& node : merged->nodes) {
    if (node.present) continue;
    for (FabricPort& p : node.ports) {
      if (!p.linked()) continue;
      const FabricNode& peer = merged->nodes[static_cast<std::size_t>(p.remote_node)];
      if (!peer.present) continue;
      for (const FabricPort& far : peer.ports) {
        if (far.number == p.remote_port && !far.up()) {
          p.state = far.state;
          p.phys_state = far.phys_state;
        }
      }
    }
  }
  known_ = merged;
  last_merge_ = now;
  out.fabric = std::move(merged);
  return out;
}

}  // namespace ibfx
