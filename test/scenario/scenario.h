// Traffic scenario driver: animates the port counters of a simulated fabric
// (ibsim) from a small, deterministic traffic model, so the exporter, its
// dashboards and its culprit analysis can be exercised on something that
// looks like a busy cluster.
//
// A scenario is a YAML file (test/scenarios/README.md has the full reference):
//
//   name: congested_spine
//   seed: 7
//   fabric: {servers: 16, rails: 4, tiers: 2, radix: 16, storage_nodes: 2}
//   time_scale: 1.0          # simulated seconds per wall second
//   duration: 600            # simulated seconds
//   tick: 1.0                # simulated seconds between counter pushes
//   xmit_wait_tick_ns: 256   # length of one PortXmitWait tick
//   max_commands_per_tick: 0 # 0: unlimited
//   jitter: 0.15             # +-15 % on every port's load and W, every tick
//   read_skew: 0.05          # +-5 % per node and tick (read-time skew)
//   effects:
//     - {type: allreduce, load: 0.6}
//     - {type: congested_port, node: spine-03, port: 5, ratio: 0.7, spread: 0.3, start: 60}
//
// The driver generates the fabric with make_fat_tree() (the same net file
// ibsim must load: ibfx-scenario --print-netfile) and, per tick, the ibsim
// console lines that move the counters:
//
//   PerformanceSet "spine-03"[5] PortCounters.PortXmitWait=2734375
//   Unlink "leaf-r0-01"[9]
//
// Model. Every cabled port end has a transmit load (fraction of line rate,
// 4xHDR: 25e9 bytes/s) and a stall ratio W in [0, 1]. Each effect adds to
// the load of the ports it touches (loads add up, capped at 1) and proposes a
// W for them (a port's W is the largest proposed: congestion does not add
// up, the worst bottleneck dominates). An effect is active in
// [start, end) (end defaults to the scenario duration); a tick that only
// partly overlaps it gets the overlapping share.
//   allreduce       every server HCA port and every rail-leaf down-port: load
//                   `load` (+- `noise`), W `wait_ratio` (+- `noise`).
//   cross_rail      every switch-to-switch port end (leaf uplinks, spine and
//                   core ports): same parameters.
//   incast          storage checkpoint: the leaf down-ports towards `targets`
//                   (default: every storage HCA) and every switch port towards
//                   their leaves get load `load` and W `ratio`; head-of-line
//                   blocking spreads one hop upstream: every switch port cabled
//                   to a switch owning such a port gets W ratio x `spread`.
//   congested_port  switch port `node`[`port`] gets W `ratio`; every switch
//                   port cabled to `node` (the leaf uplinks feeding a spine)
//                   gets W ratio x `spread`.
//   symbol_errors   `node`[`port`] counts SymbolErrorCounter at `rate`/s.
//   congestion_tree a root and its victims (ground truth: congestion_trees()).
//                   `cause` incast / slow_receiver: the root `node`[`port`] is
//                   a leaf port into an HCA; oversubscribed /
//                   routing_imbalance: a leaf's up port. The root transmits at
//                   `load` (default 0.98; slow_receiver 0.2) with W
//                   `root_ratio` (default 0.01; slow_receiver 0.8). Victims,
//                   level 1: the ports feeding the root's switch whose traffic
//                   can leave through the root (Up*/Down*: the switches above
//                   for a root facing down, the HCAs below for one facing
//                   up), W `ratio`; level 2: the switch ports feeding those,
//                   W ratio x `spread`. oversubscribed loads the leaf's other
//                   up ports at 0.88 x load (busy, evenly spread);
//                   routing_imbalance at 0.03 (idle: the routing chose one).
//                   `senders` (HCA names): they transmit at `sender_load`
//                   and wait at ratio x `spread`; `stalled` (HCA names):
//                   they only wait, at ratio x `spread` (victims whose
//                   sends cross the tree). Both are victims in
//                   congestion_trees().
//   flap            the link at `node`[`port`] goes down (Unlink) every `period`
//                   seconds for `down_time` seconds (ReLink); each flap adds 1
//                   to LinkDownedCounter on both ends. A down link moves no
//                   data and does not stall.
// Noise is a hash of (seed, effect, port, tick): no state, so the same seed
// gives the same command stream whatever is subsampled or skipped.
//
// Counters. The driver keeps cumulative 64-bit totals per port and emits
// absolute values (PerformanceSet sets, it does not add), only for counters
// that changed since they were last emitted:
//   PortCountersExtended.PortXmitData/PortRcvData   4-byte words, 64-bit
//   PortCountersExtended.PortXmitPkts/PortRcvPkts   bytes / 4096, 64-bit
//   PortCounters.PortXmitWait    W x seconds / xmit_wait_tick; 32 bits,
//                                saturates at 2^32-1 like real hardware
//   PortCounters.SymbolErrorCounter   16 bits, saturates at 65535
//   PortCounters.LinkDownedCounter    8 bits, saturates at 255
// A port's PortRcv* counters are its peer's PortXmit* counters.
//
// PortXmitWait tick. The tick is implementation specific (a few ns on current
// NVIDIA silicon) and the exporter must be configured with the same value to
// turn ticks into W. The default, 256 ns, is deliberately coarse: a port at
// W = 1 takes 2^32 x 256 ns = 18.3 min to saturate the 32-bit counter, so the
// demo scenarios (minutes) never saturate; with a 4 ns tick a port at W = 1
// would saturate in 17 s. Set xmit_wait_tick_ns lower to exercise saturation:
// the emitted value then stays at 2^32-1 (the exporter counts
// counters_saturated_total). Do not run the exporter with clear_on_threshold
// against this driver: it writes absolute values, so a counter the exporter
// clears jumps back to the driver's total on the next push.
//
// Command budget. ibsim handles each console line separately, so a tick on a
// large fabric could be thousands of lines. Ports touched by a fault effect
// (incast, congested_port, symbol_errors, flap) and Unlink/ReLink lines are
// always emitted; ports that only carry background traffic (allreduce,
// cross_rail) share what is left of max_commands_per_tick, round-robin, and
// a port that is skipped catches up (absolute values) when its turn comes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "test/sim/fabric_gen.h"

namespace ibfx::test {

inline constexpr double kLineRateBytesPerSecond = 25e9;  // 4xHDR, 200 Gb/s
inline constexpr double kPacketBytes = 4096;             // one MTU-sized packet
inline constexpr std::uint64_t kXmitWaitMax = 0xFFFFFFFFULL;
inline constexpr std::uint64_t kSymbolErrorMax = 0xFFFF;
inline constexpr std::uint64_t kLinkDownedMax = 0xFF;
inline constexpr double kDefaultXmitWaitTickNs = 256;

enum class EffectType {
  kAllreduce,
  kCrossRail,
  kIncast,
  kCongestedPort,
  kSymbolErrors,
  kFlap,
  kCongestionTree
};

const char* to_string(EffectType type);

struct Effect {
  EffectType type = EffectType::kAllreduce;
  int line = 0;  // line of the effect in the scenario file, for messages
  double start = 0;
  double end = std::numeric_limits<double>::infinity();  // resolved to duration by the loader
  // allreduce, cross_rail, incast: fraction of line rate.
  double load = 0;
  // allreduce, cross_rail: background W and relative noise on load and W.
  double wait_ratio = 0;
  double noise = 0;
  // incast: HCA names; congestion_tree: the HCAs sending into the tree;
  // congested_port/symbol_errors/flap: node[port].
  std::vector<std::string> targets;
  std::string node;
  int port = 0;
  // incast, congested_port: W of the culprit ports and the upstream factor.
  double ratio = 0;
  double spread = 0;
  // symbol_errors: errors per second.
  double rate = 0;
  // flap: seconds between downs, and how long the link stays down.
  double period = 0;
  double down_time = 0;
  // congestion_tree: "incast", "slow_receiver", "oversubscribed" or
  // "routing_imbalance"; the root's W (load is its U, ratio the first
  // level of victims' W, spread the factor for the second level).
  std::string cause;
  double root_ratio = 0;
  // congestion_tree: the senders' (targets') load, and HCAs that only wait.
  double sender_load = 0;
  std::vector<std::string> stalled;
};

struct Scenario {
  std::string path;  // file it was loaded from ("<string>" for parse_scenario)
  std::string name;
  FatTreeSpec fabric;
  std::uint64_t seed = 1;
  double time_scale = 1;  // simulated seconds per wall second
  double duration = 60;   // simulated seconds
  double tick = 1;        // simulated seconds per step()
  double xmit_wait_tick_ns = kDefaultXmitWaitTickNs;
  std::size_t max_commands_per_tick = 0;  // 0: unlimited
  // Measurement noise on every port, every tick (0: none). jitter: relative
  // noise on each port's load and W (0.15: +-15 %); read_skew: one relative
  // factor per node and tick on all its ports, as a switch read a little
  // earlier or later than the others within a sweep covers a longer or
  // shorter interval than the one its rates are divided by.
  double jitter = 0;
  double read_skew = 0;
  std::vector<Effect> effects;
};

// Parses and validates a scenario, including every node/port name against
// the generated fabric. Throws std::runtime_error("<file>:<line>: <key>: <what>").
Scenario load_scenario(const std::string& path);
Scenario parse_scenario(const std::string& yaml_text, const std::string& source = "<string>");

// Ground truth of an effect: the port an analysis should blame.
struct Culprit {
  std::size_t effect = 0;  // index into Scenario::effects
  EffectType type = EffectType::kAllreduce;
  std::string node;
  int port = 0;
  std::string counter;  // "PortXmitWait", "SymbolErrorCounter", "LinkDownedCounter"
  double value = 0;     // W for PortXmitWait, errors/s, flaps/s
  double start = 0;
  double end = 0;
};

// Ground truth of a congestion_tree effect: the root and every victim.
struct CongestionTree {
  std::size_t effect = 0;  // index into Scenario::effects
  std::string cause;
  PortName root;
  std::vector<PortName> victims;
  double start = 0;
  double end = 0;
};

// Cumulative totals of one port end (unsaturated, 64-bit).
struct PortTotals {
  std::uint64_t xmit_words = 0;
  std::uint64_t rcv_words = 0;
  std::uint64_t xmit_pkts = 0;
  std::uint64_t rcv_pkts = 0;
  std::uint64_t xmit_wait = 0;  // ticks; the emitted value saturates at kXmitWaitMax
  std::uint64_t symbol_errors = 0;
  std::uint64_t link_downed = 0;
};

class ScenarioDriver {
 public:
  explicit ScenarioDriver(Scenario scenario);

  const Scenario& scenario() const { return scenario_; }
  const Fabric& fabric() const { return fabric_; }
  // Simulated seconds covered so far (step() count x tick, capped at duration).
  double time() const { return time_; }
  bool done() const { return time_ >= scenario_.duration; }
  std::size_t ticks() const { return ticks_; }

  // Advances by one tick (the last one may be shorter) and returns the
  // console lines for it: link changes first, in time order, then counters.
  // Empty once done().
  std::vector<std::string> step();
  // ReLink lines for every link a flap left down (for an early stop).
  std::vector<std::string> cleanup();

  std::vector<Culprit> expected_culprits() const;
  // One per congestion_tree effect, in effect order.
  std::vector<CongestionTree> congestion_trees() const;
  // The stall ratio the model assigns to node[port] at time t, without noise
  // and ignoring flaps. Throws std::out_of_range for an unknown port.
  double expected_wait_ratio(const std::string& node, int port, double t) const;
  // Totals so far. Throws std::out_of_range for an unknown port.
  const PortTotals& totals(const std::string& node, int port) const;

 private:
  struct Fractional {
    double carry = 0;
    void add(double amount, std::uint64_t& total);
  };
  struct PortState {
    int node = 0;
    int port = 0;
    std::size_t peer = 0;  // index into ports_
    bool up = true;
    PortTotals totals;
    Fractional xmit_words, xmit_pkts, xmit_wait, symbol_errors;
    // Last emitted value of each counter (see kCounters in scenario.cpp).
    std::uint64_t sent[7] = {0, 0, 0, 0, 0, 0, 0};
  };
  struct Contribution {  // one effect on one port
    std::size_t port;
    double load;
    double ratio;
    bool noisy;
  };

  std::size_t port_index(const std::string& node, int port) const;
  void build_contributions();
  std::vector<Contribution> tree_contributions(const Effect& e) const;
  // Lines port `index` would emit now, and emitting them.
  std::size_t pending_lines(const PortState& state) const;
  void emit_port(PortState& state, std::vector<std::string>& out);

  Scenario scenario_;
  Fabric fabric_;
  std::vector<PortState> ports_;                 // every cabled port end, in node/port order
  std::vector<std::vector<std::size_t>> index_;  // [node][port] -> ports_ index or npos
  std::vector<std::vector<Contribution>> contributions_;  // per effect
  double time_ = 0;
  std::size_t ticks_ = 0;
  std::size_t cursor_ = 0;  // round-robin position among background ports
};

}  // namespace ibfx::test
