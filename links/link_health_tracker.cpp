#include "links/link_health_tracker.h"

#include <algorithm>
#include <chrono>
#include <tuple>

namespace ibfx {

namespace {

// The receiver's counters link health reads (PortCounters, IBA 16.1.3.5),
// in PortMemory order.
constexpr std::array<Counter, 5> kWatchedCounters = {
    Counter::kSymbolErrors,                   // SymbolErrorCounter: the BER's numerator
    Counter::kLinkErrorRecovery,              // LinkErrorRecoveryCounter
    Counter::kLinkDowned,                     // LinkDownedCounter
    Counter::kLocalLinkIntegrityErrors,       // LocalLinkIntegrityErrors
    Counter::kExcessiveBufferOverrunErrors};  // ExcessiveBufferOverrunErrors
constexpr std::size_t kSymbol = 0;
constexpr std::size_t kRecovery = 1;
constexpr std::size_t kDowned = 2;
constexpr std::size_t kIntegrity = 3;
constexpr std::size_t kOverrun = 4;

// The line rate of a link in bits per second: active lanes x lane rate
// (SDR 2 ... XDR 200 Gb/s per lane, link_lane_gbps()); 0 when unknown.
double line_rate_bits(const FabricPort& p) {
  return static_cast<double>(link_width_lanes(p.width_active)) * link_lane_gbps(p) * 1e9;
}

std::uint8_t bit(LinkCondition c) {
  return static_cast<std::uint8_t>(1u << static_cast<unsigned>(c));
}

LinkCondition worst_of(std::uint8_t conditions) {
  for (std::size_t c = kLinkConditionCount; c-- > 1;) {
    if ((conditions >> c) & 1u) return static_cast<LinkCondition>(c);
  }
  return LinkCondition::kNone;
}

}  // namespace

void LinkHealthTracker::carry_memory(const Fabric& fabric) {
  std::unordered_map<PortKey, std::size_t, PortKeyHash> old_index;
  if (fabric_) {
    old_index.reserve(memory_.size());
    for (std::size_t n = 0; n < fabric_->nodes.size(); ++n) {
      const FabricNode& node = fabric_->nodes[n];
      for (std::size_t i = 0; i < node.ports.size(); ++i) {
        old_index.emplace(PortKey{node.guid, node.ports[i].number}, first_port_[n] + i);
      }
    }
  }
  std::vector<PortMemory> memory;
  memory.reserve(fabric.port_count());
  first_port_.assign(fabric.nodes.size(), 0);
  for (std::size_t n = 0; n < fabric.nodes.size(); ++n) {
    const FabricNode& node = fabric.nodes[n];
    first_port_[n] = memory.size();
    for (const FabricPort& p : node.ports) {
      auto it = old_index.find(PortKey{node.guid, p.number});
      memory.push_back(it != old_index.end() ? memory_[it->second] : PortMemory{});
      if (p.linked() && p.up() && static_cast<std::size_t>(p.remote_node) < fabric.nodes.size()) {
        const FabricNode& far = fabric.nodes[static_cast<std::size_t>(p.remote_node)];
        learn_cable(PortKey{node.guid, p.number}, PortKey{far.guid, p.remote_port});
      }
    }
  }
  memory_ = std::move(memory);
}

// Each linked port's far end, found once per discovery rather than by a
// scan of the far node's ports every sweep.
void LinkHealthTracker::index_far_ports(const Fabric& fabric) {
  far_port_.assign(memory_.size(), kNoPort);
  for (std::size_t n = 0; n < fabric.nodes.size(); ++n) {
    const FabricNode& node = fabric.nodes[n];
    for (std::size_t i = 0; i < node.ports.size(); ++i) {
      const FabricPort& p = node.ports[i];
      if (!p.linked() || static_cast<std::size_t>(p.remote_node) >= fabric.nodes.size()) continue;
      const auto r = static_cast<std::size_t>(p.remote_node);
      const auto& far_ports = fabric.nodes[r].ports;
      for (std::size_t j = 0; j < far_ports.size(); ++j) {
        if (far_ports[j].number == p.remote_port)
          far_port_[first_port_[n] + i] = first_port_[r] + j;
      }
    }
  }
}

void LinkHealthTracker::find_odd_links(const Fabric& fabric, const Topology* topology) {
  slower_.clear();
  for (const SlowerLink& s : links_slower_than_they_should(fabric, topology)) {
    slower_.emplace(first_port_[static_cast<std::size_t>(s.node)] + s.port_index, s);
  }
  longer_.clear();
  for (const LongerLink& l : links_longer_than_their_peers(fabric, topology)) {
    longer_.emplace(first_port_[static_cast<std::size_t>(l.node)] + l.port_index, l);
  }
}

void LinkHealthTracker::mark_plain_cables(const Fabric& fabric) {
  cable_.assign(memory_.size(), 0);
  for (std::size_t n = 0; n < fabric.nodes.size(); ++n) {
    const FabricNode& node = fabric.nodes[n];
    for (std::size_t i = 0; i < node.ports.size(); ++i) {
      const FabricPort& p = node.ports[i];
      const std::size_t k = first_port_[n] + i;
      if (!p.linked() || static_cast<std::size_t>(p.remote_node) >= fabric.nodes.size()) continue;
      const auto r = static_cast<std::size_t>(p.remote_node);
      // Once per cable, from the end with the smaller (GUID, port).
      const std::uint64_t far_guid = fabric.nodes[r].guid;
      if (std::tie(far_guid, p.remote_port) < std::tie(node.guid, p.number)) continue;
      const std::size_t kf = far_port_[k];
      const bool far_up = kf != kNoPort && fabric.nodes[r].ports[kf - first_port_[r]].up();
      const bool plain =
          p.up() && far_up && !slower_.contains(k) && !slower_.contains(kf) && !longer_.contains(k);
      cable_[k] = plain ? 1 : 2;
    }
  }
}

void LinkHealthTracker::adopt(const std::shared_ptr<const Fabric>& fabric,
                              const Topology* topology) {
  // A new fabric (a discovery): the per-port memory follows its ports by
  // (GUID, port), the cables it sees up are learnt, the slow ones found.
  carry_memory(*fabric);
  observed_.assign(memory_.size(), 0);
  index_far_ports(*fabric);
  fabric_ = fabric;
  discovery_started_ =
      std::chrono::duration<double>(fabric->discovered_at.time_since_epoch()).count() -
      fabric->discovery_seconds;
  find_odd_links(*fabric, topology);
  state_.assign(memory_.size(), nullptr);
  mark_plain_cables(*fabric);
  for (auto& [key, state] : links_) {
    state.ka = flat_index(state.a);
    state.kb = flat_index(state.b);
  }
}

void LinkHealthTracker::learn_cable(const PortKey& a, const PortKey& b) {
  // Recabled: the ends' old partners lose their cable.
  for (const auto& [end, other] : {std::pair{a, b}, std::pair{b, a}}) {
    auto it = far_end_.find(end);
    if (it != far_end_.end() && !(it->second == other)) {
      const PortKey old = it->second;
      far_end_.erase(old);
      links_.erase(std::make_pair(end.guid, end.port) < std::make_pair(old.guid, old.port) ? end
                                                                                           : old);
    }
  }
  far_end_[a] = b;
  far_end_[b] = a;
}

std::size_t LinkHealthTracker::flat_index(const PortKey& key) const {
  auto it = fabric_->by_guid.find(key.guid);
  if (it == fabric_->by_guid.end()) return kNoPort;
  const auto n = static_cast<std::size_t>(it->second);
  const auto& ports = fabric_->nodes[n].ports;
  for (std::size_t i = 0; i < ports.size(); ++i) {
    if (ports[i].number == key.port) return first_port_[n] + i;
  }
  return kNoPort;
}

void LinkHealthTracker::read_ports(const CounterAccumulator& accumulator,
                                   const std::vector<std::vector<bool>>& port_read, double now) {
  for (const auto& [k, o] : observations_) observed_[k] = 0;
  observations_.clear();
  for (std::size_t n = 0; n < fabric_->nodes.size(); ++n) {
    const FabricNode& node = fabric_->nodes[n];
    for (std::size_t i = 0; i < node.ports.size(); ++i) {
      if (n >= port_read.size() || i >= port_read[n].size() || !port_read[n][i]) continue;
      const CounterAccumulator::State* st =
          accumulator.find(PortKey{node.guid, node.ports[i].number});
      if (st == nullptr) continue;
      const std::size_t k = first_port_[n] + i;
      PortMemory& m = memory_[k];
      if (m.first_read == 0) m.first_read = now;
      std::array<std::uint64_t, kWatched> delta{};
      PortObservation o;
      for (std::size_t w = 0; w < kWatched; ++w) {
        const auto c = static_cast<std::size_t>(kWatchedCounters[w]);
        const std::uint8_t bits = st->bits[c];
        if (bits == 0) continue;
        const std::uint64_t raw = st->last[c];
        // First reading or a new field width: nothing to compare with yet.
        if (m.bits[w] == bits) {
          if (raw < m.raw[w]) {
            o.restart = true;  // back towards zero: not errors, a restart
          } else {
            delta[w] = raw - m.raw[w];
          }
        }
        m.raw[w] = raw;
        m.bits[w] = bits;
      }
      const auto sym = static_cast<std::size_t>(Counter::kSymbolErrors);
      o.saturated = st->bits[sym] != 0 && st->bits[sym] < 64 &&
                    st->last[sym] == counter_field_max(st->bits[sym]);
      if (!o.restart) {
        o.errors = {delta[kSymbol], delta[kRecovery], delta[kIntegrity], delta[kOverrun]};
        o.downs = delta[kDowned];
      }
      if (!o.errors.any() && o.downs == 0 && !o.restart && !o.saturated) continue;
      observations_.emplace_back(k, o);
      observed_[k] = static_cast<std::uint32_t>(observations_.size());
    }
  }
}

const LinkHealthTracker::PortObservation* LinkHealthTracker::observation(std::size_t k) const {
  if (k == kNoPort || observed_[k] == 0) return nullptr;
  return &observations_[observed_[k] - 1].second;
}

void LinkHealthTracker::visit_links(double now, const LinkHealthConfig& config) {
  for (std::size_t n = 0; n < fabric_->nodes.size(); ++n) {
    const FabricNode& node = fabric_->nodes[n];
    for (std::size_t i = 0; i < node.ports.size(); ++i) {
      const FabricPort& p = node.ports[i];
      const PortKey key{node.guid, p.number};
      const std::size_t k = first_port_[n] + i;
      if (p.linked() && static_cast<std::size_t>(p.remote_node) < fabric_->nodes.size()) {
        // cable_ (per discovery): which end lists the cable, and whether it
        // needs a look without an observation this sweep.
        const std::size_t kf = far_port_[k];
        if (cable_[k] == 0) continue;
        if (cable_[k] == 1 && observed_[k] == 0 && observation(kf) == nullptr) continue;
        const auto r = static_cast<std::size_t>(p.remote_node);
        const PortKey far{fabric_->nodes[r].guid, p.remote_port};
        const bool far_up = kf != kNoPort && fabric_->nodes[r].ports[kf - first_port_[r]].up();
        touch(key, k, far, kf, !p.up() || !far_up, now, config);
        continue;
      }
      // Not linked now: a cable seen before, and down since (discovery no
      // longer sees its far end). Listed from its smaller end.
      auto it = far_end_.find(key);
      if (it == far_end_.end()) continue;
      const PortKey far = it->second;
      const std::size_t kf = flat_index(far);
      const bool far_linked_elsewhere = kf != kNoPort && [&] {
        const auto fn = static_cast<std::size_t>(fabric_->by_guid.at(far.guid));
        const FabricPort& fp = fabric_->nodes[fn].ports[kf - first_port_[fn]];
        return fp.linked();
      }();
      const bool far_handles = kf != kNoPort && !far_linked_elsewhere &&
                               std::tie(far.guid, far.port) < std::tie(key.guid, key.port);
      if (far_handles || far_linked_elsewhere) continue;
      const bool a_first = std::tie(key.guid, key.port) < std::tie(far.guid, far.port);
      if (a_first) {
        touch(key, k, far, kf, true, now, config);
      } else {
        touch(far, kf, key, k, true, now, config);
      }
    }
  }
}

void LinkHealthTracker::touch(const PortKey& a, std::size_t ka, const PortKey& b, std::size_t kb,
                              bool down, double now, const LinkHealthConfig& config) {
  auto [it, inserted] = links_.try_emplace(a, config);
  LinkState& s = it->second;
  s.a = a;
  s.b = b;
  s.ka = ka;
  s.kb = kb;
  const PortObservation* oa = observation(ka);
  const PortObservation* ob = observation(kb);
  // A restart of either end (counters back at zero: a host reboot, a switch
  // reset) takes the link down as a matter of course: not a fault. The
  // downs seen since the previous sweep are its own.
  const bool restart = (oa != nullptr && oa->restart) || (ob != nullptr && ob->restart);
  if (restart) {
    s.downs_a.drop_since(previous_now_);
    s.downs_b.drop_since(previous_now_);
  } else {
    if (oa != nullptr) s.downs_a.note(now, oa->downs);
    if (ob != nullptr) s.downs_b.note(now, ob->downs);
  }
  // Errors counted at a port's receiver belong to the direction INTO it.
  if (oa != nullptr && oa->errors.any()) s.into_a.add(now, oa->errors);
  if (ob != nullptr && ob->errors.any()) s.into_b.add(now, ob->errors);
  s.saturated_a = oa != nullptr && oa->saturated;
  s.saturated_b = ob != nullptr && ob->saturated;
  const bool moved =
      !restart && ((oa != nullptr && oa->downs > 0) || (ob != nullptr && ob->downs > 0));
  if (moved) s.downed_at = now;
  if (restart) s.downed_at = 0;
  s.down_now = down || moved;
  auto slow = slower_.find(ka);
  if (slow == slower_.end()) slow = slower_.find(kb);
  s.degraded_now = slow != slower_.end();
  s.degraded = s.degraded_now ? slow->second : SlowerLink{};
  // Listed from the same end as the cable (the smaller (GUID, port)).
  const auto longer = longer_.find(ka);
  s.longer_now = longer != longer_.end();
  s.longer = s.longer_now ? longer->second : LongerLink{};
}

bool LinkHealthTracker::held_down(LinkState& s,
                                  const std::vector<std::vector<bool>>& port_read) const {
  if (s.downed_at == 0) return false;
  // Proof the link is back up (or still down, from its ports' states): a
  // discovery that started after the increment (the increment asked for
  // one), or the PMA of an HCA end answering, which it can only do through
  // an Active port.
  bool proof = discovery_started_ >= s.downed_at;
  for (const auto& [key, k] : {std::pair{s.a, s.ka}, std::pair{s.b, s.kb}}) {
    if (k == kNoPort || proof) continue;
    const auto n = static_cast<std::size_t>(fabric_->by_guid.at(key.guid));
    const std::size_t i = k - first_port_[n];
    proof = fabric_->nodes[n].type != NodeType::kSwitch && n < port_read.size() &&
            i < port_read[n].size() && port_read[n][i];
  }
  if (proof) s.downed_at = 0;
  return !proof;
}

LinkReport LinkHealthTracker::judge(LinkState& s, double now, const LinkHealthConfig& config,
                                    const std::vector<std::vector<bool>>& port_read) {
  LinkReport r;
  auto end_of = [&](const PortKey& key, std::size_t k) {
    LinkEnd e;
    e.guid = key.guid;
    e.port = key.port;
    if (k == kNoPort) return e;
    const auto n = static_cast<std::size_t>(fabric_->by_guid.at(key.guid));
    e.node = static_cast<std::int32_t>(n);
    e.port_index = static_cast<std::int32_t>(k - first_port_[n]);
    const auto i = static_cast<std::size_t>(e.port_index);
    e.read = n < port_read.size() && i < port_read[n].size() && port_read[n][i];
    return e;
  };
  r.a = end_of(s.a, s.ka);
  r.b = end_of(s.b, s.kb);
  // The line rate, from whichever end is up (both train to the same).
  for (const LinkEnd* e : {&r.a, &r.b}) {
    if (e->node == kNoNode) continue;
    const FabricPort& p = fabric_->nodes[static_cast<std::size_t>(e->node)]
                              .ports[static_cast<std::size_t>(e->port_index)];
    if (p.up() && line_rate_bits(p) > 0) {
      s.bits_per_second = line_rate_bits(p);
      break;
    }
  }
  auto direction = [&](LinkDirection& d, std::size_t k, bool saturated) {
    const double watched =
        k != kNoPort && memory_[k].first_read > 0 ? now - memory_[k].first_read : 0;
    const DirectionVerdict v = d.evaluate(now, s.bits_per_second, watched, saturated, config);
    return LinkDirectionReport{v.worst(), v.symbol_ber, v.at_least, v.long_window};
  };
  r.into_a = direction(s.into_a, s.ka, s.saturated_a);
  r.into_b = direction(s.into_b, s.kb, s.saturated_b);
  std::uint8_t conditions = 0;
  if (s.down_now) conditions |= bit(LinkCondition::kDown);
  // Flapping: downs both ends counted (UFM counts a link-down only when
  // both ends' LinkDowned moved).
  const std::uint32_t flaps = std::min(s.downs_a.count(now, config.flapping_window_seconds),
                                       s.downs_b.count(now, config.flapping_window_seconds));
  if (flaps >= config.flapping_downs) conditions |= bit(LinkCondition::kFlapping);
  for (const LinkDirectionReport* d : {&r.into_a, &r.into_b}) {
    if (d->condition != LinkCondition::kNone) conditions |= bit(d->condition);
    if (d->long_window.integrity > 0 || d->long_window.overrun > 0 ||
        d->long_window.recoveries >= config.link_error_recoveries) {
      conditions |= bit(LinkCondition::kLinkErrors);
    }
  }
  if (s.degraded_now) conditions |= bit(LinkCondition::kDegraded);
  if (s.longer_now) conditions |= bit(LinkCondition::kLengthOutlier);
  // One event per link and condition: counted when it starts. A condition
  // that does not alarm opens none.
  for (std::size_t c = 1; c < kLinkConditionCount; ++c) {
    if (!link_condition_alarms(static_cast<LinkCondition>(c))) continue;
    if (((conditions & ~s.conditions) >> c) & 1u) ++events_total_[c];
  }
  s.conditions = conditions;
  const LinkCondition worst = worst_of(conditions);
  if (worst != s.worst) s.since = now;
  s.worst = worst;
  r.condition = worst;
  r.conditions = conditions;
  r.down = s.down_now;
  r.downs_last_hour = std::max(s.downs_a.count(now, 3600), s.downs_b.count(now, 3600));
  r.since = s.since;
  r.rate_gbps = s.degraded.rate_gbps;
  r.peers_rate_gbps = s.degraded.peers_rate_gbps;
  r.below_peers = s.degraded.below_peers;
  r.below_enabled = s.degraded.below_enabled;
  r.enabled = s.degraded.enabled;
  r.round_trip_ns = s.longer.round_trip_ns;
  r.peers_round_trip_ns = s.longer.peers_round_trip_ns;
  return r;
}

std::shared_ptr<const LinkHealthReport> LinkHealthTracker::observe(
    const std::shared_ptr<const Fabric>& fabric, const Topology* topology,
    const CounterAccumulator& accumulator, const std::vector<std::vector<bool>>& port_read,
    double now, const LinkHealthConfig& config) {
  auto report = std::make_shared<LinkHealthReport>();
  if (!fabric) return report;
  if (fabric != fabric_) adopt(fabric, topology);
  read_ports(accumulator, port_read, now);
  for (auto& [key, state] : links_) {
    state.down_now = false;
    state.degraded_now = false;
    state.longer_now = false;
    state.saturated_a = state.saturated_b = false;
  }
  visit_links(now, config);
  for (auto it = links_.begin(); it != links_.end();) {
    LinkState& s = it->second;
    // After a LinkDowned increment, down until known otherwise: not up
    // again at the next sweep only because the counter stopped moving.
    if (!s.down_now && held_down(s, port_read)) s.down_now = true;
    LinkReport r = judge(s, now, config, port_read);
    for (const auto& [end, d] : {std::pair{&r.a, &r.into_a}, std::pair{&r.b, &r.into_b}}) {
      if (d->symbol_ber >= 0 && end->node != kNoNode) {
        report->port_ber.push_back(
            {end->node, static_cast<std::uint32_t>(end->port_index), d->symbol_ber, d->at_least});
      }
    }
    const bool forgettable = r.conditions == 0 && s.into_a.idle(now) && s.into_b.idle(now) &&
                             s.downs_a.count(now, 3600) == 0 && s.downs_b.count(now, 3600) == 0;
    if (r.conditions != 0) report->links.push_back(r);
    it = forgettable ? links_.erase(it) : std::next(it);
  }
  previous_now_ = now;
  std::sort(report->links.begin(), report->links.end(),
            [](const LinkReport& x, const LinkReport& y) {
              if (x.condition != y.condition) return x.condition > y.condition;
              if (x.worse().symbol_ber != y.worse().symbol_ber)
                return x.worse().symbol_ber > y.worse().symbol_ber;
              return std::tie(x.a.guid, x.a.port) < std::tie(y.a.guid, y.a.port);
            });
  std::sort(report->port_ber.begin(), report->port_ber.end(),
            [](const PortBer& x, const PortBer& y) {
              return std::tie(x.node, x.port_index) < std::tie(y.node, y.port_index);
            });
  report->events_total = events_total_;
  report->tracked = links_.size();
  report->memory_bytes = memory_.capacity() * sizeof(PortMemory) +
                         observed_.capacity() * sizeof(std::uint32_t) +
                         far_port_.capacity() * sizeof(std::size_t) + cable_.capacity() +
                         state_.capacity() * sizeof(void*) +
                         far_end_.size() * (sizeof(PortKey) * 2 + 2 * sizeof(void*)) +
                         links_.size() * (sizeof(LinkState) + sizeof(PortKey) + 2 * sizeof(void*));
  return report;
}

void LinkHealthTracker::forget(std::uint64_t guid) {
  // The accumulator forgets the node's ports too: no cached entry may outlive it.
  std::fill(state_.begin(), state_.end(), nullptr);
  for (auto it = far_end_.begin(); it != far_end_.end();) {
    if (it->first.guid == guid || it->second.guid == guid) {
      links_.erase(it->first);
      it = far_end_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace ibfx
