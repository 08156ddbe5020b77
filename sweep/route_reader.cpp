#include "sweep/route_reader.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "base/log.h"

namespace ibfx {

namespace {
// A table confirmed unchanged by a rotation cycle only moves its read_at:
// published at most this often, so that a quiet fabric does not cost a
// copy of every table every sweep.
constexpr std::chrono::seconds kConfirmPublishInterval{10};
}  // namespace

RouteReader::RouteReader(MadEngine& engine, const RoutesConfig& config)
    : engine_(engine), config_(config) {}

void RouteReader::clear() {
  readers_.clear();
  const std::uint64_t version = tables_.version;
  tables_ = RouteTables{};
  // Kept across a disable: a consumer comparing versions must never see an
  // old number for new content.
  tables_.version = version;
  published_.reset();
  known_.clear();
  pass_running_ = false;
  content_changed_ = state_changed_ = confirmed_ = false;
  called_ = false;
  carry_ = 0;
  const RouteReaderStats kept = stats_;
  stats_ = RouteReaderStats{};
  stats_.smps_sent = kept.smps_sent;
  stats_.smps_answered = kept.smps_answered;
  stats_.smps_failed = kept.smps_failed;
  stats_.smps_cancelled = kept.smps_cancelled;
  stats_.full_reads = kept.full_reads;
  stats_.reroutes = kept.reroutes;
}

void RouteReader::reload(const RoutesConfig& config) {
  if (config_.enabled && !config.enabled) clear();
  config_ = config;
}

void RouteReader::forget(std::uint64_t guid) {
  const auto it = tables_.by_guid.find(guid);
  if (it == tables_.by_guid.end()) return;
  const std::size_t index = it->second;
  readers_.erase(readers_.begin() + static_cast<std::ptrdiff_t>(index));
  tables_.switches.erase(tables_.switches.begin() + static_cast<std::ptrdiff_t>(index));
  tables_.index();
  std::erase_if(known_, [guid](const auto& k) { return k.first == guid; });
  content_changed_ = true;
  check_pass_done();
  // Handed on at once: forgetting happens between sweeps.
  after_run();
}

void RouteReader::sync_fabric(const Fabric& fabric) {
  std::vector<std::pair<std::uint64_t, std::uint16_t>> now;
  std::uint16_t max_lid = 0;
  for (const FabricNode& node : fabric.nodes) {
    max_lid = std::max(max_lid, node.lid);
    for (const FabricPort& port : node.ports) max_lid = std::max(max_lid, port.lid);
    // Switch port 0's LID is where its SMA answers; a switch without one
    // cannot be asked yet.
    if (node.type == NodeType::kSwitch && node.lid != 0) now.emplace_back(node.guid, node.lid);
  }
  fabric_max_lid_ = max_lid;
  std::sort(now.begin(), now.end());
  if (now == known_) return;

  std::vector<Reader> readers;
  RouteTables tables;
  tables.version = tables_.version;
  tables.full_read_finished = tables_.full_read_finished;
  tables.full_read_seconds = tables_.full_read_seconds;
  tables.reroutes = tables_.reroutes;
  readers.reserve(now.size());
  tables.switches.reserve(now.size());
  for (const auto& [guid, lid] : now) {
    const auto it = tables_.by_guid.find(guid);
    if (it != tables_.by_guid.end()) {
      readers.push_back(std::move(readers_[it->second]));
      tables.switches.push_back(std::move(tables_.switches[it->second]));
    } else {
      readers.emplace_back().guid = guid;
      tables.switches.emplace_back().guid = guid;
    }
    readers.back().lid = lid;
    tables.switches.back().lid = lid;
  }
  // Any switch added, dropped or moved to another LID is a change of the
  // tables (a dropped one's table goes with it).
  content_changed_ = true;
  readers_ = std::move(readers);
  tables_ = std::move(tables);
  tables_.index();
  known_ = std::move(now);
  start_pass(Clock::now());
}

void RouteReader::start_cycle(std::size_t index) {
  Reader& r = readers_[index];
  r.cycle = ++next_cycle_;
  r.info_asked = false;
  r.info_read = false;
  r.top = 0;
  r.blocks.clear();
  r.blocks_read = 0;
  r.cursor = 0;
  // Only a cycle that may replace the table reads into a staging copy; a
  // rotation compares each block with the table held, so a quiet fabric
  // costs one byte per LID per switch.
  r.staged = r.in_pass || r.changed || !tables_.switches[index].complete;
  r.staging = {};
}

void RouteReader::start_pass(Clock::time_point now) {
  // Every cycle starts over: blocks read before the change may predate it.
  pass_running_ = true;
  pass_started_ = now;
  for (std::size_t i = 0; i < readers_.size(); ++i) {
    readers_[i].in_pass = true;
    start_cycle(i);
  }
}

void RouteReader::check_pass_done() {
  if (!pass_running_) return;
  // A switch that does not answer cannot hold the pass up: it keeps its
  // last table, marked stale, and is read whole when it answers again.
  const bool done = std::none_of(readers_.begin(), readers_.end(),
                                 [](const Reader& r) { return r.in_pass && !r.stale; });
  if (!done) return;
  pass_running_ = false;
  tables_.full_read_seconds = std::chrono::duration<double>(Clock::now() - pass_started_).count();
  tables_.full_read_finished = std::chrono::system_clock::now();
  stats_.full_read_seconds = tables_.full_read_seconds;
  ++stats_.full_reads;
  state_changed_ = true;
}

std::size_t RouteReader::budget(Clock::time_point now, std::chrono::milliseconds interval) {
  // The budget is the rate times the time since the last call, so sweeps
  // that come late or cut short do not lower the rate and ones that come
  // early do not raise it; capped at two intervals, so that a long pause
  // (a worker restart) does not turn into one burst.
  using Seconds = std::chrono::duration<double>;
  const double cap = 2 * Seconds(interval).count();
  const double since = called_ ? Seconds(now - last_call_).count() : Seconds(interval).count();
  called_ = true;
  last_call_ = now;
  // Under a MADs-per-second cap (mad.max_mads_per_second, the operator's
  // bound on everything this daemon sends) the tables take at most a
  // share of it: the counters come first, and a full read just takes
  // longer.
  double rate = config_.smps_per_second;
  const int mad_cap = engine_.limits().max_mads_per_second;
  if (mad_cap > 0) rate = std::min(rate, kShareOfMadCap * mad_cap);
  since_ = std::clamp(since, 0.0, cap);
  const double smps = rate * since_ + carry_;
  const double whole = std::floor(smps);
  carry_ = std::min(smps - whole, 1.0);
  return static_cast<std::size_t>(whole);
}

std::size_t RouteReader::rotation_budget(Clock::time_point now) {
  if (now < settle_until_) return SIZE_MAX;
  // Every table once per reread_interval: its SMPs (SwitchInfo and the
  // blocks of the table held) over the interval, for the seconds this
  // budget covers.
  double total = 0;
  for (std::size_t i = 0; i < readers_.size(); ++i) {
    const SwitchRoutes& held = tables_.switches[i];
    total += 1.0 +
             static_cast<double>(lft_blocks(held.complete ? held.linear_fdb_top : fabric_max_lid_));
  }
  const double interval = std::chrono::duration<double>(config_.reread_interval).count();
  const double smps = total * since_ / std::max(interval, 1.0) + rotation_carry_;
  const double whole = std::floor(smps);
  rotation_carry_ = std::min(smps - whole, 1.0);
  return static_cast<std::size_t>(whole);
}

void RouteReader::note_links(const Fabric& fabric, Clock::time_point now) {
  // Each switch port's link (its far end, or none when down) folded into
  // one hash: a change is a link gone down or up, or cabled elsewhere.
  std::uint64_t h = 0x9e3779b97f4a7c15ULL;
  for (const FabricNode& node : fabric.nodes) {
    if (node.type != NodeType::kSwitch) continue;
    for (const FabricPort& port : node.ports) {
      const bool up = port.remote_node != kNoNode && port.up();
      const std::uint64_t far =
          up ? fabric.nodes[static_cast<std::size_t>(port.remote_node)].guid ^ port.remote_port : 0;
      h ^= (node.guid + port.number) * 0x100000001b3ULL + far + (h << 6) + (h >> 2);
    }
  }
  if (links_seen_ && h != links_) settle_until_ = now + kSettleAfterLinkChange;
  links_ = h;
  links_seen_ = true;
}

RouteReader::Priority RouteReader::priority(const Reader& r) {
  if (r.changed) return Priority::kChanged;
  if (r.in_pass) return Priority::kPass;
  return Priority::kRotation;
}

std::size_t RouteReader::work_left(std::size_t index) const {
  const Reader& r = readers_[index];
  if (r.info_read) return r.blocks.size() - r.blocks_read;
  // Before SwitchInfo: the blocks of the table held, or of the fabric's
  // highest LID, or the highest LinearFDBTop another switch reported, for
  // a switch never read (an estimate of its LinearFDBTop).
  const SwitchRoutes& held = tables_.switches[index];
  const std::uint16_t top =
      held.complete ? held.linear_fdb_top : std::max(fabric_max_lid_, max_top_seen_);
  return 1 + lft_blocks(top);
}

void RouteReader::allot(std::size_t budget, std::size_t rotation) {
  // Work first by priority (a switch found re-routed, then the full pass,
  // then the rotation), and within one priority the budget spread evenly
  // over the switches (water filling), starting at a switch that moves
  // round, so that many switches' management CPUs share the load and the
  // engine's per-node windows run side by side.
  const std::size_t n = readers_.size();
  if (n == 0) return;
  next_first_ %= n;
  std::size_t last_given = next_first_;
  for (const Priority level : {Priority::kChanged, Priority::kPass, Priority::kRotation}) {
    // The rotation takes no more than its pace, and gives back what it
    // does not take; a stale switch's one probe is not paced (it tells
    // when the switch answers again).
    std::size_t kept = 0;
    if (level == Priority::kRotation) {
      for (std::size_t k = 0; k < n && budget > 0; ++k) {
        Reader& r = readers_[(next_first_ + k) % n];
        if (priority(r) == level && r.stale && r.allot == 0) {
          r.allot = 1;
          --budget;
        }
      }
      kept = rotation < budget ? budget - rotation : 0;
      budget -= kept;
    }
    std::vector<std::pair<std::size_t, std::size_t>> wanting;  // index, cap
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t i = (next_first_ + k) % n;
      const Reader& r = readers_[i];
      if (priority(r) != level) continue;
      // A stale switch gets one probe a call: silence costs one timeout
      // chain, not a window of them, until it answers again.
      const std::size_t cap = r.stale ? 1 : work_left(i);
      if (cap > r.allot) wanting.emplace_back(i, cap);
    }
    while (budget > 0 && !wanting.empty()) {
      const std::size_t share = std::max<std::size_t>(1, budget / wanting.size());
      std::vector<std::pair<std::size_t, std::size_t>> still;
      for (const auto& [i, cap] : wanting) {
        Reader& r = readers_[i];
        const std::size_t give = std::min({share, cap - r.allot, budget});
        r.allot += give;
        budget -= give;
        if (give > 0) last_given = i;
        if (r.allot < cap) still.emplace_back(i, cap);
      }
      wanting = std::move(still);
    }
    budget += kept;
  }
  // The next call starts after the last switch served, so that a budget
  // smaller than the switches' count reaches all of them in turn.
  next_first_ = last_given + 1;
}

void RouteReader::submit(const Fabric& fabric, Clock::time_point now,
                         std::chrono::milliseconds interval) {
  if (!config_.enabled) return;
  if (!engine_.smp_supported()) {
    if (!warned_no_smp_) {
      warned_no_smp_ = true;
      log_warn(
          "routes: the transport cannot send SMPs (no QP0 access), so no switch's forwarding "
          "table is read (routes.enabled)");
    }
    return;
  }
  sync_fabric(fabric);
  for (Reader& r : readers_) {
    // The engine completes every request within its run; anything still
    // marked in flight was lost with an abandoned run: asked again.
    r.allot = 0;
    r.inflight = 0;
    r.info_asked = false;
    for (BlockState& b : r.blocks) {
      if (b == BlockState::kInFlight) b = BlockState::kToRead;
    }
    r.cursor = 0;
  }
  note_links(fabric, now);
  const std::size_t total = budget(now, interval);
  allot(total, rotation_budget(now));
  for (std::size_t i = 0; i < readers_.size(); ++i) pump(i);
}

void RouteReader::pump(std::size_t index) {
  Reader& r = readers_[index];
  const int window = std::max(1, engine_.limits().per_node_inflight);
  const std::uint32_t cycle = r.cycle;
  while (r.allot > 0 && r.inflight < window) {
    if (!r.info_read) {
      // SwitchInfo first: LinearFDBTop says how many blocks there are.
      if (r.info_asked) return;
      r.info_asked = true;
      --r.allot;
      ++r.inflight;
      ++stats_.smps_sent;
      engine_.submit_smp(r.lid, kAttrSwitchInfo, 0, [this, index, cycle](const MadCompletion& c) {
        on_info(index, cycle, c);
      });
      return;
    }
    while (r.cursor < r.blocks.size() && r.blocks[r.cursor] != BlockState::kToRead) ++r.cursor;
    if (r.cursor >= r.blocks.size()) return;
    const auto block = static_cast<std::uint32_t>(r.cursor);
    r.blocks[block] = BlockState::kInFlight;
    --r.allot;
    ++r.inflight;
    ++stats_.smps_sent;
    // LinearForwardingTable: the attribute modifier is the block number.
    engine_.submit_smp(
        r.lid, kAttrLinearForwardingTable, block,
        [this, index, cycle, block](const MadCompletion& c) { on_block(index, cycle, block, c); });
  }
}

bool RouteReader::accept(std::size_t index, const MadCompletion& c) {
  Reader& r = readers_[index];
  if (r.inflight > 0) --r.inflight;
  switch (c.result) {
    case MadResult::kOk:
      ++stats_.smps_answered;
      if (r.stale) {
        r.stale = false;
        tables_.switches[index].stale = false;
        state_changed_ = true;
      }
      return true;
    case MadResult::kCancelled:
      // The sweep's deadline came first: the switch was not really asked.
      ++stats_.smps_cancelled;
      r.allot = 0;
      return false;
    case MadResult::kTimeout:
    case MadResult::kError:
      ++stats_.smps_failed;
      r.allot = 0;  // no more this call: one window of silence is enough
      if (!r.stale) {
        r.stale = true;
        tables_.switches[index].stale = true;
        state_changed_ = true;
        check_pass_done();
      }
      return false;
  }
  return false;
}

void RouteReader::on_info(std::size_t index, std::uint32_t cycle, const MadCompletion& c) {
  if (index >= readers_.size()) return;
  Reader& r = readers_[index];
  if (r.cycle == cycle) r.info_asked = false;
  if (!accept(index, c) || r.cycle != cycle) {
    if (c.result == MadResult::kOk) pump(index);
    return;
  }
  const std::uint16_t top = decode_smp_switch_info(c.data).usable_top();
  max_top_seen_ = std::max(max_top_seen_, top);
  const SwitchRoutes& held = tables_.switches[index];
  if (!r.staged && top != held.linear_fdb_top) {
    // The table grew or shrank: the SM re-routed.
    note_change(index);
    pump(index);
    return;
  }
  r.info_read = true;
  r.top = top;
  r.blocks.assign(lft_blocks(top), BlockState::kToRead);
  r.blocks_read = 0;
  r.cursor = 0;
  if (r.staged) r.staging.assign(std::size_t{top} + 1, kNoRoute);
  pump(index);
}

void RouteReader::on_block(std::size_t index, std::uint32_t cycle, std::uint32_t block,
                           const MadCompletion& c) {
  if (index >= readers_.size()) return;
  Reader& r = readers_[index];
  const bool current = r.cycle == cycle && r.info_read && block < r.blocks.size() &&
                       r.blocks[block] == BlockState::kInFlight;
  if (!accept(index, c)) {
    if (current) {
      r.blocks[block] = BlockState::kToRead;
      r.cursor = std::min<std::size_t>(r.cursor, block);
    }
    return;
  }
  if (!current) {
    pump(index);
    return;
  }
  const LftBlock entries = decode_smp_lft_block(c.data);
  const std::size_t first = std::size_t{block} * kLftEntriesPerBlock;
  // Entries past LinearFDBTop are not part of the table (IBA 14.2.5.10).
  const std::size_t end =
      std::min<std::size_t>(first + kLftEntriesPerBlock, std::size_t{r.top} + 1);
  if (r.staged) {
    std::copy(entries.begin(), entries.begin() + static_cast<std::ptrdiff_t>(end - first),
              r.staging.begin() + static_cast<std::ptrdiff_t>(first));
  } else {
    const std::vector<std::uint8_t>& held = tables_.switches[index].out_port;
    const bool same =
        held.size() >= end &&
        std::equal(entries.begin(), entries.begin() + static_cast<std::ptrdiff_t>(end - first),
                   held.begin() + static_cast<std::ptrdiff_t>(first));
    if (!same) {
      note_change(index);
      pump(index);
      return;
    }
  }
  r.blocks[block] = BlockState::kRead;
  if (++r.blocks_read == r.blocks.size()) finish_cycle(index);
  pump(index);
}

void RouteReader::note_change(std::size_t index) {
  // A rotation found a block (or LinearFDBTop) unlike the table held: this
  // switch is read again first, and every switch after it, since the SM
  // usually re-routes them all.
  log_info("routes: the forwarding table of switch LID " + std::to_string(readers_[index].lid) +
           " changed; reading every switch's table again");
  readers_[index].changed = true;
  start_pass(Clock::now());
}

void RouteReader::finish_cycle(std::size_t index) {
  Reader& r = readers_[index];
  SwitchRoutes& held = tables_.switches[index];
  if (r.staged && (!held.complete || held.linear_fdb_top != r.top || held.out_port != r.staging)) {
    if (held.complete) {
      ++tables_.reroutes;
      ++stats_.reroutes;
    }
    held.out_port = std::move(r.staging);
    held.linear_fdb_top = r.top;
    held.complete = true;
    content_changed_ = true;
  }
  held.read_at = std::chrono::system_clock::now();
  confirmed_ = true;
  r.in_pass = false;
  r.changed = false;
  // The next cycle (a rotation) starts right away, within what is left of
  // this call's share.
  start_cycle(index);
  check_pass_done();
}

void RouteReader::after_run() {
  if (!config_.enabled) return;
  const auto now = Clock::now();
  const bool any_complete = std::any_of(tables_.switches.begin(), tables_.switches.end(),
                                        [](const SwitchRoutes& s) { return s.complete; });
  const bool confirm_due = confirmed_ && now - last_publish_ >= kConfirmPublishInterval;
  if (content_changed_) ++tables_.version;
  // Null until a first table is whole; then every change is handed on.
  if ((any_complete || published_) && (content_changed_ || state_changed_ || confirm_due)) {
    published_ = std::make_shared<const RouteTables>(tables_);
    last_publish_ = now;
    state_changed_ = confirmed_ = false;
  }
  content_changed_ = false;

  stats_.switches = tables_.switches.size();
  stats_.stale = 0;
  stats_.incomplete = 0;
  stats_.oldest_read_at = {};
  bool first = true;
  for (const SwitchRoutes& s : tables_.switches) {
    if (s.stale) ++stats_.stale;
    if (!s.complete) {
      ++stats_.incomplete;
      continue;
    }
    if (first || s.read_at < stats_.oldest_read_at) stats_.oldest_read_at = s.read_at;
    first = false;
  }
  stats_.full_read_running = pass_running_;
  stats_.reroutes = tables_.reroutes;
}

}  // namespace ibfx
