#include "sweep/sweeper.h"

#include <algorithm>

namespace ibfx {
namespace {
constexpr std::uint8_t kMethodGet = 0x01;
constexpr std::uint8_t kMethodSet = 0x02;
}  // namespace

std::uint64_t shard_hash(std::uint64_t guid) {
  std::uint64_t h = 1469598103934665603ull;
  for (int i = 0; i < 8; ++i) {
    h ^= (guid >> (8 * i)) & 0xFF;
    h *= 1099511628211ull;
  }
  return h;
}

Sweeper::Sweeper(MadEngine& engine, CounterAccumulator& accumulator)
    : engine_(engine), accumulator_(accumulator) {}

SweepResult Sweeper::sweep(const Fabric& fabric, const SweepOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const MadEngineStats before = engine_.stats();
  SweepResult result;
  result.started_at = std::chrono::system_clock::now();
  result.nodes.resize(fabric.nodes.size());
  result.port_read.resize(fabric.nodes.size());
  work_.clear();
  ctx_ = Context{&fabric, &options, &result};
  checks_.clear();
  // Reserve so PortWork addresses stay stable while callbacks hold indices.
  work_.reserve(fabric.port_count());
  for (std::uint32_t n = 0; n < fabric.nodes.size(); ++n) {
    result.port_read[n].assign(fabric.nodes[n].ports.size(), false);
  }

  std::vector<std::uint32_t> order;
  order.reserve(fabric.nodes.size());
  for (std::uint32_t n = 0; n < fabric.nodes.size(); ++n) {
    const FabricNode& node = fabric.nodes[n];
    if (node.type == NodeType::kHca && !options.include_hcas) continue;
    if (options.shard_count > 1 &&
        shard_hash(node.guid) % options.shard_count != options.shard_index) {
      continue;
    }
    // Not addressable: no LID yet. A MAD to LID 0 would only time out,
    // every sweep.
    if (node.lid == 0) continue;
    result.nodes[n].swept = true;
    order.push_back(n);
  }
  if (last_cut_) {
    // Round robin after a sweep the budget cut short: the nodes with the
    // oldest readings first. The engine serves nodes about in the order
    // they were queued, so what a budget cuts off is what was queued last.
    const auto touched_at = [this, &fabric](std::uint32_t n) {
      auto it = last_state_.find(fabric.nodes[n].guid);
      return it == last_state_.end() ? std::chrono::steady_clock::time_point{}
                                     : it->second.touched_at;
    };
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
      return touched_at(a) < touched_at(b);
    });
  }
  for (const std::uint32_t n : order) {
    const FabricNode& node = fabric.nodes[n];
    auto cached = capabilities_.find(node.guid);
    if (cached != capabilities_.end() && (cached->second.vendor_id != node.vendor_id ||
                                          cached->second.device_id != node.device_id)) {
      capabilities_.erase(cached);  // another device behind the same GUID: probe again
      cached = capabilities_.end();
    }
    if (cached == capabilities_.end()) {
      probe_node(fabric, n);
      continue;
    }
    // The optional probes wait for the LID check where there is one.
    const bool probe = needs_probe(cached->second, options);
    if (!query_ports(fabric, n, cached->second.caps, probe) && probe) probe_tick(fabric, n);
  }
  // The budget covers the whole sweep: a run cut short still cancels what
  // is left and settles every node's state after its deadline, so that
  // tail, as long as the last time, comes off the deadline.
  const auto deadline =
      start + options.budget -
      std::min<std::chrono::steady_clock::duration>(cut_tail_, options.budget / 2);
  if (options.before_run) options.before_run();
  const bool finished = engine_.run(deadline);
  finish_nodes(fabric, order, std::chrono::steady_clock::now(), result);
  if (!finished) cut_tail_ = std::chrono::steady_clock::now() - deadline;

  const MadEngineStats& after = engine_.stats();
  result.completed = finished;
  result.mads_sent = after.sent - before.sent;
  result.mads_ok = after.ok - before.ok;
  result.mads_timeout = after.timeouts - before.timeouts;
  result.mads_error = after.errors - before.errors;
  result.duration_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

void Sweeper::probe_node(const Fabric& fabric, std::uint32_t n) {
  // ClassPortInfo (IBA 16.1.3.1) once per node: it says which counter
  // attributes and widths the PMA supports.
  engine_.submit(fabric.nodes[n].lid, kMethodGet, kAttrClassPortInfo, 0, PmaData{},
                 [this, &fabric, n](const MadCompletion& c) {
                   NodeSweep& ns = ctx_.result->nodes[n];
                   if (c.result == MadResult::kCancelled) {
                     ++ns.cut_mads;
                     return;
                   }
                   if (c.result != MadResult::kOk) {
                     ++ns.failed_mads;
                     return;
                   }
                   ++ns.answered_mads;
                   const FabricNode& node = fabric.nodes[n];
                   const PmaCapabilities caps = decode_class_port_info(c.data);
                   capabilities_[node.guid] =
                       Probed{caps, node.vendor_id, node.device_id, false, {}, {}};
                   // The tick probe waits for the LID check where there is
                   // one (verify_lid()).
                   if (!query_ports(fabric, n, caps, true)) probe_tick(fabric, n);
                 });
}

bool Sweeper::needs_probe(const Probed& p, const SweepOptions& options) {
  if (!p.tick_probed) return true;
  for (std::size_t a = 0; a < kOptionalAttrCount; ++a) {
    if (options.groups.enabled(optional_attr_info(a).group) && p.optional[a] == Support::kUnknown &&
        !p.probing[a]) {
      return true;
    }
  }
  return false;
}

namespace {

// A switch answers for all its ports at its LID: ask about a cabled one
// (port 0 may lack what the external ports have). An HCA: the port
// whose LID the node's is.
std::uint8_t probe_port(const FabricNode& self) {
  std::uint8_t port = self.ports.empty() ? 1 : self.ports.front().number;
  for (const FabricPort& p : self.ports) {
    if ((self.type == NodeType::kSwitch && p.linked()) ||
        (self.type != NodeType::kSwitch && p.lid == self.lid)) {
      port = p.number;
      break;
    }
  }
  return port;
}

}  // namespace

Sweeper::WantedProbes Sweeper::wanted_probes(Probed& probed) const {
  // ClassPortInfo.CapabilityMask.IsSamplesOnlySupported (IBA 16.1.3.1):
  // a PMA that implements PortSamples only has none of these attributes.
  const bool samples_only = (probed.caps.cap_mask & pma_cap::kSamplesOnly) != 0;
  WantedProbes wanted;
  for (std::size_t a = 0; a < kOptionalAttrCount; ++a) {
    wanted.attrs[a] = ctx_.options->groups.enabled(optional_attr_info(a).group) &&
                      probed.optional[a] == Support::kUnknown && !probed.probing[a];
    if (wanted.attrs[a] && samples_only) {
      probed.optional[a] = Support::kUnsupported;
      wanted.attrs[a] = false;
    }
    wanted.any = wanted.any || wanted.attrs[a];
  }
  return wanted;
}

void Sweeper::withhold_probes(Probed& probed, const WantedProbes& wanted) {
  if (!probed.tick_probed || wanted.any) ++ctx_.result->probes_withheld;
  probed.tick_probed = true;
  for (std::size_t a = 0; a < kOptionalAttrCount; ++a) {
    if (wanted.attrs[a]) probed.optional[a] = Support::kUnsupported;  // never asked: never read
  }
}

void Sweeper::probe_optional_attrs(const FabricNode& self, Probed& probed,
                                   const WantedProbes& wanted) {
  const std::uint64_t guid = self.guid;
  const std::uint8_t port = probe_port(self);
  for (std::size_t a = 0; a < kOptionalAttrCount; ++a) {
    if (!wanted.attrs[a]) continue;
    probed.probing[a] = true;
    ++ctx_.result->optional_probes;
    engine_.submit_optional(self.lid, kMethodGet, optional_attr_info(a).attr_id, 0,
                            optional_attr_request(port), [this, guid, a](const MadCompletion& c) {
                              auto pit = capabilities_.find(guid);
                              if (pit == capabilities_.end()) return;
                              pit->second.probing[a] = false;
                              if (c.result == MadResult::kCancelled) return;  // ask next sweep
                              // No answer is taken as no: a PMA that drops
                              // what it does not implement would otherwise
                              // cost a timeout every sweep.
                              pit->second.optional[a] = c.result == MadResult::kOk
                                                            ? Support::kSupported
                                                            : Support::kUnsupported;
                            });
  }
}

void Sweeper::probe_sample_tick(const FabricNode& self) {
  const std::uint64_t guid = self.guid;
  engine_.submit_optional(self.lid, kMethodGet, kAttrPortSamplesControl, 0,
                          port_samples_control_request(
                              self.ports.empty() ? std::uint8_t{1} : self.ports.front().number),
                          [this, guid](const MadCompletion& sc) {
                            if (sc.result == MadResult::kCancelled) return;
                            auto tit = capabilities_.find(guid);
                            if (tit == capabilities_.end()) return;
                            tit->second.tick_probed = true;
                            if (sc.result == MadResult::kOk) {
                              tit->second.caps.sample_tick = decode_sample_tick(sc.data);
                            }
                          });
}

void Sweeper::probe_tick(const Fabric& fabric, std::uint32_t n) {
  // PortSamplesControl.Tick (IBA 16.1.3.2), once per node, for the length
  // of a PortXmitWait tick. Optional: a PMA that does not answer keeps the
  // configured assumption, is not counted as failing, and is not asked
  // again; only a probe the budget cancelled is repeated.
  // Never to the SM's node or our own (SmGuard, docs/safety.md): a PMA that
  // does not answer it itself hands it to the software registered at the
  // port, which there is the SM. Withheld once, then remembered as asked.
  // The opt-in groups' attributes (PortRcvErrorDetails, ...) have no
  // ClassPortInfo capability bit: one Get to one port says whether the PMA
  // implements them. They are optional MADs too (an unimplemented one is
  // handed to the software at the port): same guard, same once-per-node.
  const FabricNode& self = fabric.nodes[n];
  auto it = capabilities_.find(self.guid);
  if (it == capabilities_.end()) return;
  Probed& probed = it->second;
  const WantedProbes wanted = wanted_probes(probed);
  if (ctx_.options->guard.protects(self.guid)) {
    withhold_probes(probed, wanted);
    return;
  }
  probe_optional_attrs(self, probed, wanted);
  if (!probed.tick_probed) probe_sample_tick(self);
}

void Sweeper::finish_nodes(const Fabric& fabric, const std::vector<std::uint32_t>& order,
                           std::chrono::steady_clock::time_point now, SweepResult& result) {
  const bool smp = engine_.smp_supported();
  last_cut_ = false;
  for (const std::uint32_t n : order) {
    NodeSweep& ns = result.nodes[n];
    const std::uint64_t guid = fabric.nodes[n].guid;
    // Its ClassPortInfo may have come from the wrong node as well: ask again
    // once discovery has the new LID.
    if (ns.lid_moved) capabilities_.erase(guid);
    auto [last, inserted] = last_state_.try_emplace(guid, LastState{false, false, now, {}});
    const auto& read = result.port_read[n];
    if (ns.reached || std::find(read.begin(), read.end(), true) != read.end()) {
      last->second.touched_at = now;
    }
    const bool answered_now = ns.answered_mads > 0 && !ns.lid_moved;
    if (ns.answered_mads + ns.failed_mads + ns.cut_mads == 0 && !ns.lid_moved) {
      // Nothing was sent to it this sweep (no port it could be asked at):
      // not asked is not down. It keeps what it last said, or shows nothing
      // until it has been asked once.
      if (last->second.ever_reached) {
        ns.answered = last->second.answered;
      } else {
        ns.swept = false;
      }
      continue;
    }
    ns.reached = ns.cut_mads == 0;
    if (!smp) ns.lid_confirmed = answered_now;
    if (ns.reached) {
      port_resume_.erase(guid);
      ns.answered = answered_now;
      ns.went_silent =
          !ns.answered && !ns.lid_moved && last->second.ever_reached && last->second.answered;
      last->second = LastState{ns.answered, true, now, now};
    } else {
      // Cut short by the budget: not (fully) asked. First in line next
      // time, from the first port it did not read.
      last_cut_ = true;
      const std::uint32_t from = port_resume_.count(guid) != 0 ? port_resume_[guid] : 0;
      for (std::uint32_t k = 0; k < read.size(); ++k) {
        const auto i = static_cast<std::uint32_t>((from + k) % read.size());
        if (!read[i]) {
          port_resume_[guid] = i;
          break;
        }
      }
      ns.stale = true;
      ++result.stale_nodes;
      if (answered_now || ns.lid_moved) {
        ns.answered = answered_now;  // what it did say this sweep is news
        last->second.answered = answered_now;
      } else if (last->second.ever_reached) {
        ns.answered = last->second.answered;
      } else {
        ns.swept = false;  // never reached yet: no state to show
      }
    }
    result.oldest_reading_age_seconds =
        std::max(result.oldest_reading_age_seconds,
                 std::chrono::duration<double>(now - last->second.reached_at).count());
  }
}

bool Sweeper::query_ports(const Fabric& fabric, std::uint32_t n, const PmaCapabilities& caps,
                          bool probe) {
  const FabricNode& node = fabric.nodes[n];
  const bool verify = engine_.smp_supported();
  // The opt-in groups' attributes this node answered (none when all are off).
  const Probed* probed = nullptr;
  if (ctx_.options->groups.any()) {
    auto it = capabilities_.find(node.guid);
    if (it != capabilities_.end()) probed = &it->second;
  }
  std::uint32_t switch_check = kNoCheck;  // a switch answers at one LID for all its ports
  // A node a cut-short sweep left half read starts where it stopped.
  const auto resume = port_resume_.find(node.guid);
  const std::uint32_t from = resume == port_resume_.end() ? 0 : resume->second;
  const auto port_count = static_cast<std::uint32_t>(node.ports.size());
  for (std::uint32_t k = 0; k < port_count; ++k) {
    const std::uint32_t i = (from + k) % port_count;
    const FabricPort& port = node.ports[i];
    // An HCA port is addressed by its own LID: a down HCA port has none that
    // routes, so it keeps its last totals. Switch ports all answer through
    // the switch's LID, linked or not, so down switch ports stay fresh.
    std::uint16_t lid = port.lid;
    if (node.type != NodeType::kSwitch && (lid == 0 || !port.up())) continue;
    if (node.type == NodeType::kSwitch && !port.linked() &&
        accumulator_.find(PortKey{node.guid, port.number}) == nullptr) {
      continue;  // an empty cage: nothing has ever been plugged in
    }
    work_.push_back(PortWork{n, i, 0, false, kNoCheck, {}, nullptr});
    const auto w = static_cast<std::uint32_t>(work_.size() - 1);
    // IBA 16.1.4.x: PortCountersExtended carries 64-bit data/packet counters;
    // the 32-bit PortCounters is still needed for the error counters (and
    // PortXmitWait) unless CapabilityMask2 advertises the additional ones.
    if (caps.extended()) {
      ++work_[w].outstanding;
      engine_.submit(lid, kMethodGet, kAttrPortCountersExtended, 0,
                     port_counters_ext_request(port.number),
                     [this, w](const MadCompletion& c) { on_port_reply(w, c, true); });
    }
    if (caps.needs_port_counters()) {
      ++work_[w].outstanding;
      engine_.submit(lid, kMethodGet, kAttrPortCounters, 0, port_counters_request(port.number),
                     [this, w](const MadCompletion& c) { on_port_reply(w, c, false); });
    }
    if (probed != nullptr && work_[w].outstanding != 0) {
      for (std::size_t a = 0; a < kOptionalAttrCount; ++a) {
        if (probed->optional[a] != Support::kSupported ||
            !ctx_.options->groups.enabled(optional_attr_info(a).group)) {
          continue;
        }
        const auto attr = static_cast<OptionalAttr>(a);
        if (attr == OptionalAttr::kVlXmitWait || attr == OptionalAttr::kSlRcvFecn ||
            attr == OptionalAttr::kSlRcvBecn || attr == OptionalAttr::kVlXmitTimeCong) {
          if (!work_[w].lanes) work_[w].lanes = std::make_unique<LaneReading>();
        }
        ++work_[w].outstanding;
        ++ctx_.result->optional_reads;
        engine_.submit(lid, kMethodGet, optional_attr_info(a).attr_id, 0,
                       optional_attr_request(port.number),
                       [this, w, attr](const MadCompletion& c) { on_optional_reply(w, attr, c); });
      }
    }
    if (!verify || work_[w].outstanding == 0) continue;
    // Callbacks run only from engine_.run(), so the reads just submitted
    // cannot have completed yet: counting them here is race-free.
    std::uint32_t check = node.type == NodeType::kSwitch ? switch_check : kNoCheck;
    if (check == kNoCheck) {
      const std::uint8_t owner = node.type == NodeType::kSwitch ? 0 : port.number;
      checks_.push_back(LidCheck{n, lid, owner, 0, {}, false});
      check = static_cast<std::uint32_t>(checks_.size() - 1);
      if (node.type == NodeType::kSwitch) switch_check = check;
    }
    ++checks_[check].outstanding;
    work_[w].check = check;
    // The probe goes to the node's LID only once the check has confirmed
    // that LID still belongs to this node: after an SM restart an old LID
    // may belong to the SM's own port now, which the guard cannot know.
    if (probe && lid == node.lid) checks_[check].probe = true;
  }
  // With LID checks on, a node whose own LID got no check (its first port
  // is down) is not probed at all: nothing would confirm who answers there.
  return probe && verify;
}

void Sweeper::on_port_reply(std::uint32_t w, const MadCompletion& c, bool extended) {
  const Fabric& fabric = *ctx_.fabric;
  PortWork& work = work_[w];
  if (c.result == MadResult::kOk) {
    // Looked up only for an answer: a cut sweep cancels ~100k reads.
    const PmaCapabilities& caps_now = capabilities_[fabric.nodes[work.node].guid].caps;
    if (extended) {
      decode_port_counters_ext(c.data, caps_now, work.reading);
    } else {
      // Narrow values must not override 64-bit ones already decoded.
      CounterReading narrow;
      decode_port_counters(c.data, caps_now, narrow);
      for (std::size_t k = 0; k < kCounterCount; ++k) {
        if (narrow.bits[k] != 0 && work.reading.bits[k] != 64) {
          work.reading.value[k] = narrow.value[k];
          work.reading.bits[k] = narrow.bits[k];
        }
      }
    }
    ++ctx_.result->nodes[work.node].answered_mads;
  } else if (c.result == MadResult::kCancelled) {
    work.failed = true;  // a half reading would mix two instants
    ++ctx_.result->nodes[work.node].cut_mads;
  } else {
    work.failed = true;
    ++ctx_.result->nodes[work.node].failed_mads;
  }
  if (--work.outstanding == 0) port_done(fabric, w, *ctx_.options, *ctx_.result);
}

void Sweeper::on_optional_reply(std::uint32_t w, OptionalAttr attr, const MadCompletion& c) {
  const Fabric& fabric = *ctx_.fabric;
  PortWork& work = work_[w];
  NodeSweep& ns = ctx_.result->nodes[work.node];
  if (c.result == MadResult::kOk) {
    LaneReading scratch;
    decode_optional_attr(attr, c.data, work.reading, work.lanes ? *work.lanes : scratch);
    ++ns.answered_mads;
  } else if (c.result == MadResult::kCancelled) {
    work.failed = true;  // as for the main reads: a cut port is read next sweep
    ++ns.cut_mads;
  } else {
    // The group's counters of this port keep their last totals; the port's
    // other counters are still good. A PMA that says no (an error status)
    // is not asked again until rediscovery.
    ++ns.failed_mads;
    if (c.result == MadResult::kError) {
      auto it = capabilities_.find(fabric.nodes[work.node].guid);
      if (it != capabilities_.end()) {
        it->second.optional[static_cast<std::size_t>(attr)] = Support::kUnsupported;
      }
    }
  }
  if (--work.outstanding == 0) port_done(fabric, w, *ctx_.options, *ctx_.result);
}

void Sweeper::port_done(const Fabric& fabric, std::size_t w, const SweepOptions& options,
                        SweepResult& result) {
  PortWork& work = work_[w];
  if (work.check == kNoCheck) {
    // A half reading would mix two instants: skip it.
    if (!work.failed) apply_reading(fabric, work, options, result);
    return;
  }
  const std::uint32_t c = work.check;
  if (!work.failed) checks_[c].held.push_back(static_cast<std::uint32_t>(w));
  if (--checks_[c].outstanding == 0 && !checks_[c].held.empty()) {
    verify_lid(fabric, c, options, result);
  }
}

void Sweeper::verify_lid(const Fabric& fabric, std::uint32_t c, const SweepOptions& options,
                         SweepResult& result) {
  // Sent after the readings arrived: if the LID still belongs to the node
  // now, it did when they were read (barring a move there and back within
  // one round trip).
  engine_.submit_smp(checks_[c].lid, kAttrNodeInfo, 0,
                     [this, &fabric, c, &options, &result](const MadCompletion& mc) {
                       const LidCheck& check = checks_[c];
                       const FabricNode& node = fabric.nodes[check.node];
                       if (mc.result == MadResult::kOk) {
                         const SmpNodeInfo info = decode_smp_node_info(mc.data);
                         const std::uint64_t guid = info.node_guid;
                         const std::uint8_t port = info.local_port;
                         if (guid != node.guid || (check.port != 0 && port != check.port)) {
                           result.nodes[check.node].lid_moved = true;
                           ++result.lid_mismatches;
                           return;
                         }
                         result.nodes[check.node].lid_confirmed = true;
                         if (check.probe) probe_tick(fabric, check.node);
                       }
                       // Confirmed, or not confirmable: an SMA that does not answer (a lost
                       // SMP) is no evidence that the LID
                       // moved: the PMA at it just did answer. Never a mismatch.
                       for (std::uint32_t w : check.held)
                         apply_reading(fabric, work_[w], options, result);
                     });
}

void Sweeper::apply_reading(const Fabric& fabric, PortWork& work, const SweepOptions& options,
                            SweepResult& result) {
  const FabricNode& node = fabric.nodes[work.node];
  const FabricPort& port = node.ports[work.port_index];
  const PortKey key{node.guid, port.number};
  result.port_read[work.node][work.port_index] = true;
  ++result.ports_read;
  const std::uint32_t mask = accumulator_.apply(key, work.reading, options.clear);
  if (work.lanes) accumulator_.lanes().apply(key, *work.lanes);
  if (mask == 0) return;
  // A write the operator enabled, but not one to make to the SM's node:
  // the counter then saturates and is counted as such.
  if (options.guard.protects(node.guid)) {
    ++result.clears_withheld;
    return;
  }
  ++result.clears_sent;
  engine_.submit(port.lid, kMethodSet, kAttrPortCounters, 0,
                 port_counters_clear_request(port.number, mask),
                 [this, key, mask](const MadCompletion& c) {
                   if (c.result == MadResult::kOk) accumulator_.note_cleared(key, mask);
                 });
}

}  // namespace ibfx
