// Benchmark on a simulated fabric: discovery time, sweep time, MADs/s,
// /metrics render time and size, peak RSS — next to the raw MAD rate of the
// same simulator measured in the same run by a minimal pipelined MAD pump.
//
//   ibfx_bench --servers 512 --rails 8 --radix 64 [--tiers 2] [--sweeps 3]
//              [--max-smps 16] [--tables 1] [--compare-prometheus-cpp 1] [--groups evc]
//              [--daemon-exe build/release/ibfabric_exporter]
// --daemon-exe also sweeps through the daemon's MAD worker process.
// --cadence S (with --daemon-exe) then runs the daemon itself at
// --cadence-interval (1s) for S seconds after a warm-up: sweeps per second,
// sweep and render+gzip times, CPU per second of the daemon, its MAD worker
// and ibsim (bench/daemon_cadence.h).
// --route-read S (with --daemon-exe) runs the daemon from its start until its
// first full read of the forwarding tables ends (at most S seconds after its
// first sweep), with the default configuration and again at
// --sweep.interval=1s, then at 1s with routes.enabled false for as long: the
// read's seconds and SMPs, and the sweeps' cadence with and without it
// (bench/daemon_route_read.h, bench/route_read).
// --groups turns on the opt-in counter groups: e(rror details), v(L wait), c(ongestion).
// --tables 1 adds discovery per max_smps (next to ibnetdiscover -o) and the
// sweep time per load budget (in-flight limits, MADs/s cap).
// --stage 1 also sweeps through the daemon's SweepStage (default
// configuration: SM guard, budget, route reader on and off) in-process and,
// with --daemon-exe, through the MAD worker, each alternated with a pump of
// the same MAD count: best and mean of each (bench/sweep_floor).
// IBFX_BENCH_PROFILE_WORKER=1 adds 40 worker sweeps back to back between two
// "profile:" lines, a steady window for `perf record -a` or `perf stat -p`.
//
// It re-executes itself under umad2sim (LD_PRELOAD) so that it talks to the
// ibsim instance it brought up.
#include <prometheus/counter.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <iostream>
#include <string>
#include <unordered_map>
#include <vector>

#include "bench/daemon_cadence.h"
#include "bench/daemon_route_read.h"
#include "discovery/discovery.h"
#include "discovery/discovery_process.h"
#include "exposition/counter_families.h"
#include "mad/mad_engine.h"
#include "mad/mad_transport.h"
#include "mad/mad_worker.h"
#include "snapshot/snapshot.h"
#include "sweep/sweep_stage.h"
#include "sweep/sweeper.h"
#include "test/sim/cli_args.h"
#include "test/sim/fat_tree_flags.h"
#include "test/sim/sim_fabric.h"
#include "test/support/snapshot_support.h"

namespace {
using ibfx::bench::Clock;
using ibfx::bench::since;

// Hides a transport's SMP support: with --lid-check 0 the sweep runs
// without its NodeInfo LID check, to measure what the check costs.
class WithoutSmp final : public ibfx::MadTransport {
 public:
  explicit WithoutSmp(ibfx::MadTransport& t) : t_(t) {}
  bool send(std::uint16_t lid, const ibfx::MadBytes& mad,
            std::chrono::milliseconds timeout) override {
    return t_.send(lid, mad, timeout);
  }
  ibfx::Received receive(std::chrono::milliseconds wait) override { return t_.receive(wait); }

 private:
  ibfx::MadTransport& t_;
};

// The transport as the daemon's sweep stage owns it (SweepStage takes
// ownership); SMPs forwarded too.
class Forward final : public ibfx::MadTransport {
 public:
  explicit Forward(ibfx::MadTransport& t) : t_(t) {}
  bool send(std::uint16_t lid, const ibfx::MadBytes& mad,
            std::chrono::milliseconds timeout) override {
    return t_.send(lid, mad, timeout);
  }
  ibfx::Received receive(std::chrono::milliseconds wait) override { return t_.receive(wait); }
  bool supports_smp() const override { return t_.supports_smp(); }

 private:
  ibfx::MadTransport& t_;
};

// Best and mean of repeated timings of one kind (sweeps or pumps).
struct FloorRow {
  double best = 1e9;
  double sum = 0;
  std::size_t count = 0;
  std::uint64_t mads = 0;  // of the last one
  void add(double seconds, std::uint64_t sent) {
    best = std::min(best, seconds);
    sum += seconds;
    ++count;
    mads = sent;
  }
  void add(const ibfx::SweepResult& r) { add(r.duration_seconds, r.mads_sent); }
  double mean() const { return count == 0 ? 0 : sum / static_cast<double>(count); }
};

// The raw MAD pump: `count` PortCounters/PortCountersExtended Gets, round-robin over `targets`,
// `window` in flight, matched by TID and nothing else. No per-node limit, no
// retries, no decoding: the ceiling for what the simulator can answer.
double pump(ibfx::MadTransport& t,
            const std::vector<std::pair<std::uint16_t, std::uint8_t>>& targets, std::size_t count,
            int window, std::size_t& answered) {
  const auto start = Clock::now();
  std::size_t sent = 0;
  answered = 0;
  int inflight = 0;
  ibfx::MadBytes mad{};
  std::uint64_t tid = 1;
  auto last_progress = Clock::now();
  while (answered < count) {
    while (inflight < window && sent < count) {
      // The sweep's mix: PortCounters and PortCountersExtended of every port.
      const auto& [lid, port] = targets[(sent / 2) % targets.size()];
      if (sent % 2 == 0) {
        ibfx::build_pma_mad(mad, 1, ibfx::kAttrPortCounters, 0, tid++,
                            ibfx::port_counters_request(port));
      } else {
        ibfx::build_pma_mad(mad, 1, ibfx::kAttrPortCountersExtended, 0, tid++,
                            ibfx::port_counters_ext_request(port));
      }
      if (t.send(lid, mad, std::chrono::milliseconds(1000))) ++inflight;
      ++sent;
    }
    const ibfx::Received r = t.receive(std::chrono::milliseconds(100));
    if (r.kind == ibfx::Received::Kind::kNothing) {
      if (Clock::now() - last_progress > std::chrono::seconds(2)) break;  // lost MADs
      continue;
    }
    last_progress = Clock::now();
    --inflight;
    ++answered;
  }
  return since(start);
}

void print_route_read(const char* label, const ibfx::bench::RouteReadFigures& f) {
  std::printf(
      "daemon, %s: first sweep %.1f s after the start; %s after %.1f s: full read %.1f s "
      "(full_read_seconds), SMPs answered %.0f, failed %.0f, cancelled %.0f; %.0f tables, %.0f "
      "incomplete; %zu sweeps, mean %.3f s, max %.3f s, %zu cut short, %.0f overruns, ports "
      "read per sweep mean %.0f, fewest %.0f, longest gap between sweeps %.2f s; engine MADs "
      "answered %.0f, cancelled %.0f; CPU s/s: daemon %.2f, MAD worker %.2f, ibsim %.2f; load "
      "average %.1f -> %.1f\n",
      label, f.until_first_sweep,
      f.finished ? "read done" : (f.tables > 0 ? "no full read yet" : "routes off, ran"), f.waited,
      f.full_read_seconds, f.smps_answered, f.smps_failed, f.smps_cancelled, f.tables, f.incomplete,
      f.sweeps, f.sweep_mean, f.sweep_max, f.cut_short, f.overruns, f.ports_mean, f.ports_min,
      f.gap_max, f.mads_ok, f.mads_cancelled, f.daemon_cpu, f.worker_cpu, f.ibsim_cpu,
      f.load_before, f.load_after);
}
}  // namespace

namespace {
int bench_main(int argc, char** argv) {
  // Line-buffered even into a pipe or file, so a long run shows progress.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  ibfx::test::FatTreeSpec spec;
  spec.servers = 32;
  spec.rails = 8;
  spec.radix = 64;
  spec.tiers = 2;
  int sweeps = 3;
  int window = 128;
  int per_node = 4;
  int max_smps = ibfx::DiscoveryConfig{}.max_smps;
  bool stage = false;         // also sweep through the daemon's SweepStage
  bool tables = false;        // discovery per max_smps and sweep per load budget
  bool lid_check = true;      // the sweep's NodeInfo check, where the transport allows it
  bool compare_pcpp = false;  // also build the series as prometheus-cpp objects (GBs at 98k ports)
  std::string groups;         // opt-in counter groups: any of e (error details), v (per VL), c (cc)
  std::string daemon_exe;
  int cadence_seconds = 0;  // the daemon at cadence_interval for this long (--daemon-exe)
  std::string cadence_interval = "1s";
  int route_read_seconds = 0;  // the daemon's first full read of the tables, at most this long
  try {
    ibfx::test::ArgReader args(argc, argv);
    auto number = [&args] { return static_cast<int>(args.integer(0, 1 << 20)); };
    while (args.next()) {
      if (args.is("--daemon-exe"))
        daemon_exe = args.value();
      else if (ibfx::test::read_fat_tree_flag(args, spec))
        continue;
      else if (args.is("--sweeps"))
        sweeps = number();
      else if (args.is("--window"))
        window = number();
      else if (args.is("--per-node"))
        per_node = number();
      else if (args.is("--max-smps"))
        max_smps = number();
      else if (args.is("--stage"))
        stage = number() != 0;
      else if (args.is("--tables"))
        tables = number() != 0;
      else if (args.is("--lid-check"))
        lid_check = number() != 0;
      else if (args.is("--cadence"))
        cadence_seconds = number();
      else if (args.is("--cadence-interval"))
        cadence_interval = args.value();
      else if (args.is("--route-read"))
        route_read_seconds = number();
      else if (args.is("--compare-prometheus-cpp"))
        compare_pcpp = number() != 0;
      else if (args.is("--groups"))
        groups = args.value();
      else
        args.unknown();
    }
  } catch (const ibfx::test::UsageError& e) {
    std::cerr << "ibfx_bench: " << e.what() << "\n";
    return 2;
  }
  const auto fabric_spec = ibfx::test::make_fat_tree(spec);
  const auto t0 = Clock::now();
  ibfx::test::SimOptions opts;
  opts.timeout = std::chrono::minutes(10);
  ibfx::test::SimFabric sim(fabric_spec, opts);
  const double bringup = since(t0);
  // Become a client of this simulator: the preload reads IBSIM_SOCKNAME when
  // the first umad call initializes it, which has not happened yet.
  for (const auto& [k, v] : sim.env()) {
    if (k == "IBSIM_SOCKNAME") setenv(k.c_str(), v.c_str(), 1);
  }
  if (chdir(sim.dir().c_str()) != 0) return 1;
  if (std::getenv("LD_PRELOAD") == nullptr ||
      std::strstr(std::getenv("LD_PRELOAD"), "umad2sim") == nullptr) {
    std::cerr << "run me with LD_PRELOAD=" << ibfx::test::kUmad2SimPath << "\n";
    return 2;
  }

  // Discovery before the transport exists: libibnetdisc registers its own
  // Subnet Management agent, and under umad2sim a process has one agent
  // slot per class, which the transport's LID check then takes. Later
  // discoveries run in a process of their own, as in the daemon.
  ibfx::DiscoveryConfig dcfg;
  dcfg.max_smps = max_smps;
  ibfx::Discovery discovery("", 0, dcfg);
  const auto td = Clock::now();
  ibfx::DiscoveryResult dr = discovery.discover();
  const double discovery_s = since(td);
  if (!dr.fabric) {
    std::cerr << "discovery failed: " << dr.error << "\n";
    return 1;
  }
  ibfx::UmadTransport transport("", 0);
  if (!transport.supports_smp()) {
    std::cerr << "no LID check in the sweep: " << transport.smp_error() << "\n";
  }
  const ibfx::Fabric& fabric = *dr.fabric;

  WithoutSmp no_smp(transport);
  ibfx::MadTransport& sweep_transport =
      lid_check ? static_cast<ibfx::MadTransport&>(transport) : no_smp;
  std::printf("sweep LID check: %s\n", sweep_transport.supports_smp() ? "on" : "off");
  ibfx::MadEngine engine(
      sweep_transport,
      ibfx::MadEngineLimits{window, per_node, std::chrono::milliseconds(1000), 2, 0});
  ibfx::CounterAccumulator acc;
  ibfx::Sweeper sweeper(engine, acc);
  // As the daemon does: nothing optional to the SM's port (the simulated
  // fabric's opensm would not survive it, docs/safety.md).
  ibfx::SweepOptions options;
  options.guard = ibfx::SmGuard(fabric, transport.local_port());
  options.groups.error_details = groups.find('e') != std::string::npos;
  options.groups.vl_xmit_wait = groups.find('v') != std::string::npos;
  options.groups.congestion_control = groups.find('c') != std::string::npos;
  // The same MAD count through the raw pump.
  std::vector<std::pair<std::uint16_t, std::uint8_t>> targets;
  for (const auto& n : fabric.nodes) {
    for (const auto& p : n.ports) {
      if (p.lid != 0 && (n.type == ibfx::NodeType::kSwitch ? p.linked() : p.up())) {
        targets.emplace_back(p.lid, p.number);
      }
    }
  }
  // Sweep 1 also reads ClassPortInfo (and warms the simulator up); then
  // sweeps and pumps alternate so that both see the same machine load, and
  // the best of each is reported.
  ibfx::SweepResult last = sweeper.sweep(fabric, options);
  double best_sweep = last.duration_seconds;
  double pump_s = 1e9;
  std::size_t answered = 0;
  for (int i = 1; i < sweeps; ++i) {
    last = sweeper.sweep(fabric, options);
    best_sweep = i == 1 ? last.duration_seconds : std::min(best_sweep, last.duration_seconds);
    pump_s = std::min(pump_s, pump(transport, targets, last.mads_sent, window, answered));
  }
  if (sweeps < 2) pump_s = pump(transport, targets, last.mads_sent, window, answered);
  // The daemon's own sweep path in-process: SweepStage with the default
  // configuration (SM guard, budget, route reader on), and the same with
  // routes.enabled false, each alternated with a pump of the Sweeper's MAD
  // count, so that all three see the same machine load. Best and mean of
  // each: a mean set against a best (the daemon's logged sweeps against
  // bench/run's pump) reads as a fixed cost on a loaded machine.
  FloorRow stage_on, stage_off, stage_pump, worker_stage, worker_pump;
  if (stage) {
    ibfx::Config config;  // sweep.interval 10 s: the route reader's budget is
                          // its rate x the time since the last sweep
    config.mad.global_inflight = window;
    config.mad.per_node_inflight = per_node;
    ibfx::SweepStage with_routes(std::make_unique<Forward>(sweep_transport), config);
    config.routes.enabled = false;
    ibfx::SweepStage without_routes(std::make_unique<Forward>(sweep_transport), config);
    const ibfx::NodeNameMap names;
    // The first sweep of each also reads ClassPortInfo (and the route
    // reader's first full pass of the tables): not counted.
    with_routes.sweep(fabric, transport.local_port(), names);
    without_routes.sweep(fabric, transport.local_port(), names);
    for (int i = 0; i < std::max(2, sweeps); ++i) {
      stage_on.add(with_routes.sweep(fabric, transport.local_port(), names));
      stage_off.add(without_routes.sweep(fabric, transport.local_port(), names));
      stage_pump.add(pump(transport, targets, last.mads_sent, window, answered), answered);
    }
    pump_s = std::min(pump_s, stage_pump.best);
  }
  std::printf("counter groups \"%s\": last sweep %zu optional reads, %llu MADs, %zu ports\n",
              groups.c_str(), last.optional_reads, static_cast<unsigned long long>(last.mads_sent),
              last.ports_read);

  // The daemon's own path: the same sweeps through its MAD worker process
  // (the daemon binary re-executed with --mad-worker; frames over a socket).
  double best_worker_sweep = 0;
  if (!daemon_exe.empty()) {
    ibfx::MadWorkerOptions wo;
    wo.exe = daemon_exe;
    wo.ca = transport.ca_name();
    wo.ca_port = transport.ca_port();
    wo.log_level = "warn";
    ibfx::MadWorker worker(wo);
    worker.start();
    auto wt = worker.transport();
    WithoutSmp wno_smp(*wt);
    ibfx::MadEngine wengine(
        lid_check ? *wt : wno_smp,
        ibfx::MadEngineLimits{window, per_node, std::chrono::milliseconds(1000), 2, 0});
    ibfx::CounterAccumulator wacc;
    ibfx::Sweeper wsweeper(wengine, wacc);
    wsweeper.sweep(fabric, options);
    best_worker_sweep = 1e9;
    if (std::getenv("IBFX_BENCH_PROFILE_WORKER") != nullptr) {
      std::printf("profile: worker sweeps start\n");
      for (int i = 0; i < 40; ++i) wsweeper.sweep(fabric, options);
      std::printf("profile: worker sweeps end\n");
    }
    for (int i = 1; i < std::max(2, sweeps); ++i) {
      best_worker_sweep =
          std::min(best_worker_sweep, wsweeper.sweep(fabric, options).duration_seconds);
      pump_s = std::min(pump_s, pump(transport, targets, last.mads_sent, window, answered));
    }
    if (stage) {
      // The daemon's sweep path whole: SweepStage (routes on) over the worker.
      ibfx::Config config;
      config.mad.global_inflight = window;
      config.mad.per_node_inflight = per_node;
      ibfx::SweepStage daemon_stage(std::make_unique<Forward>(*wt), config);
      const ibfx::NodeNameMap names;
      daemon_stage.sweep(fabric, transport.local_port(), names);
      for (int i = 0; i < std::max(2, sweeps); ++i) {
        worker_stage.add(daemon_stage.sweep(fabric, transport.local_port(), names));
        worker_pump.add(pump(transport, targets, last.mads_sent, window, answered), answered);
      }
      pump_s = std::min(pump_s, worker_pump.best);
    }
    worker.stop();
  }

  auto snap = ibfx::test::make_snapshot(dr.fabric, last, acc, {});
  const auto tr = Clock::now();
  std::size_t text_bytes = 0;
  ibfx::render_exposition(*snap,
                          [&text_bytes](std::string_view piece) { text_bytes += piece.size(); });
  const double render_s = since(tr);
  const auto tg = Clock::now();
  // What the daemon's publisher does once per snapshot.
  const ibfx::RenderedExposition rendered = ibfx::RenderedExposition::build(*snap);
  const double gzip_s = since(tg);
  const std::string gz = ibfx::test::gzip_member(rendered.runs());

  // The alternative design: the fabric series in prometheus-cpp's object
  // model, materialized and serialized per scrape.
  double pcpp_build_s = 0;
  double pcpp_scrape_s = 0;
  std::size_t pcpp_bytes = 0;
  if (compare_pcpp) {
    const auto tb = Clock::now();
    prometheus::Registry registry;
    std::vector<prometheus::Family<prometheus::Counter>*> families;
    for (std::size_t c = 0; c < ibfx::kCounterCount; ++c) {
      families.push_back(&prometheus::BuildCounter()
                              .Name(std::string(ibfx::counter_family(c).name))
                              .Help(std::string(ibfx::counter_family(c).help))
                              .Register(registry));
    }
    for (const ibfx::PortView& v : snap->ports) {
      if (!v.has_counters) continue;
      const ibfx::FabricNode& node = fabric.nodes[v.node];
      const prometheus::Labels labels{{"node_guid", ibfx::guid_hex(node.guid)},
                                      {"node_name", node.description},
                                      {"node_type", std::string(ibfx::node_type_name(node.type))},
                                      {"port", std::to_string(node.ports[v.port_index].number)}};
      for (std::size_t c = 0; c < ibfx::kCounterCount; ++c) {
        if (v.present[c] != 0) {
          families[c]->Add(labels).Increment(static_cast<double>(v.totals[c]));
        }
      }
    }
    pcpp_build_s = since(tb);
    const auto ts = Clock::now();
    const std::string out = prometheus::TextSerializer().Serialize(registry.Collect());
    pcpp_scrape_s = since(ts);
    pcpp_bytes = out.size();
  }

  std::printf(
      "fabric: %d servers x %d rails, %d tiers, radix %d: %zu nodes, %zu ports (sim bring-up "
      "%.1f s)\n",
      spec.servers, spec.rails, spec.tiers, spec.radix, fabric.nodes.size(), fabric.port_count(),
      bringup);
  std::printf("discovery: %.3f s\n", discovery_s);
  std::printf("sweep: %.3f s for %llu MADs (%.0f MADs/s), %zu ports read, %llu timeouts\n",
              best_sweep, static_cast<unsigned long long>(last.mads_sent),
              static_cast<double>(last.mads_sent) / best_sweep, last.ports_read,
              static_cast<unsigned long long>(last.mads_timeout));
  std::printf("raw pump: %.3f s for %zu MADs (%.0f MADs/s); sweep/pump = %.2f\n", pump_s, answered,
              static_cast<double>(answered) / pump_s, best_sweep / pump_s);
  if (stage_pump.count > 0) {
    std::printf("raw pump, alternated with the SweepStage sweeps: best %.3f s, mean %.3f s (%zu)\n",
                stage_pump.best, stage_pump.mean(), stage_pump.count);
    for (const auto& [name, row] : {std::pair{"on", &stage_on}, std::pair{"off", &stage_off}}) {
      std::printf(
          "SweepStage, routes %s: best %.3f s, mean %.3f s, %llu MADs; sweep/pump best/best "
          "%.2f, mean/mean %.2f, per MAD (best) %.2f\n",
          name, row->best, row->mean(), static_cast<unsigned long long>(row->mads),
          row->best / stage_pump.best, row->mean() / stage_pump.mean(),
          (row->best / static_cast<double>(row->mads)) /
              (stage_pump.best / static_cast<double>(stage_pump.mads)));
    }
  }
  if (worker_pump.count > 0) {
    std::printf(
        "SweepStage (routes on) through the MAD worker process: best %.3f s, mean %.3f s, %llu "
        "MADs; pump alternated: best %.3f s, mean %.3f s; sweep/pump best/best %.2f, mean/mean "
        "%.2f\n",
        worker_stage.best, worker_stage.mean(), static_cast<unsigned long long>(worker_stage.mads),
        worker_pump.best, worker_pump.mean(), worker_stage.best / worker_pump.best,
        worker_stage.mean() / worker_pump.mean());
  }
  if (best_worker_sweep > 0) {
    std::printf("sweep through the MAD worker process: %.3f s; sweep/pump = %.2f\n",
                best_worker_sweep, best_worker_sweep / pump_s);
  }
  std::printf("render: %.3f s, %zu bytes; render+gzip: %.3f s, %zu bytes\n", render_s, text_bytes,
              gzip_s, gz.size());
  if (compare_pcpp)
    std::printf(
        "prometheus-cpp model (counters only): build %.3f s, per-scrape Collect+Serialize "
        "%.3f s, %zu bytes\n",
        pcpp_build_s, pcpp_scrape_s, pcpp_bytes);
  std::printf("peak RSS: %.1f MiB\n", ibfx::bench::peak_resident_mib());
  if (cadence_seconds > 0 && !daemon_exe.empty()) {
    const ibfx::bench::CadenceFigures c =
        ibfx::bench::daemon_cadence(sim, daemon_exe, cadence_interval, std::chrono::seconds(10),
                                    std::chrono::seconds(cadence_seconds));
    std::printf(
        "daemon at --sweep.interval=%s for %.1f s: %zu sweeps (one every %.3f s), sweep mean "
        "%.3f s max %.3f s; %zu snapshots published, render+gzip mean %.3f s "
        "max %.3f s, %zu dropped; CPU s/s: daemon %.2f, MAD worker %.2f, ibsim %.2f; %.0f ports "
        "read per sweep; load average %.1f -> %.1f\n",
        cadence_interval.c_str(), c.seconds, c.sweeps,
        c.sweeps > 0 ? c.seconds / static_cast<double>(c.sweeps) : 0.0, c.sweep_mean, c.sweep_max,
        c.published, c.render_mean, c.render_max, c.dropped, c.daemon_cpu, c.worker_cpu,
        c.ibsim_cpu, c.ports_mean, c.load_before, c.load_after);
  }
  if (route_read_seconds > 0 && !daemon_exe.empty()) {
    // What a full read asks: SwitchInfo and blocks 0..top/64 of each
    // switch, top being LinearFDBTop (opensm sets it to the highest LID).
    std::size_t switches = 0;
    std::uint16_t top = 0;
    for (const auto& n : fabric.nodes) {
      switches += n.type == ibfx::NodeType::kSwitch ? 1 : 0;
      for (const auto& p : n.ports) top = std::max(top, p.lid);
    }
    std::printf("route read: %zu switches, highest LID %u: %zu SMPs for a full read\n", switches,
                top, switches * (2 + top / 64));
    const std::chrono::seconds cap(route_read_seconds);
    const std::string off = sim.dir() + "/routes-off.yaml";
    std::ofstream(off) << "routes:\n  enabled: false\n";
    const ibfx::bench::RouteReadFigures by_default =
        ibfx::bench::daemon_route_read(sim, daemon_exe, {}, true, cap);
    print_route_read("default configuration (sweep.interval 10s)", by_default);
    const ibfx::bench::RouteReadFigures at_1s =
        ibfx::bench::daemon_route_read(sim, daemon_exe, {"--sweep.interval=1s"}, true, cap);
    print_route_read("--sweep.interval=1s", at_1s);
    // The same window without route reads (30 s to 2 minutes): does a 1 s
    // sweep of this fabric keep its beat on this machine at all?
    const auto baseline =
        std::chrono::seconds(std::clamp<long>(std::lround(at_1s.waited), 30, 120));
    print_route_read(
        "--sweep.interval=1s, routes.enabled false",
        ibfx::bench::daemon_route_read(
            sim, daemon_exe, {"--sweep.interval=1s", "--config.file=" + off}, false, baseline));
  }
  if (tables) {
    // Discovery against the reference tool on the same simulator (same
    // library, libibnetdisc; ibnetdiscover -o sets its max_smps), through
    // the daemon's discovery process (--daemon-exe), spawn included.
    for (int smps : {16, 64, 256}) {
      ibfx::DiscoveryConfig c;
      c.max_smps = smps;
      if (daemon_exe.empty()) break;  // in-process it would take the transport's agent slot
      ibfx::DiscoveryProcessOptions po;
      po.exe = daemon_exe;
      po.ca = transport.ca_name();
      po.ca_port = transport.ca_port();
      po.log_level = "warn";
      const auto t = Clock::now();
      const bool ok = ibfx::DiscoveryProcess(po).discover(c).fabric != nullptr;
      const double ours = since(t);
      const auto t2 = Clock::now();
      const std::string cmd = "ibnetdiscover -o " + std::to_string(smps) + " >/dev/null 2>&1";
      const int rc = std::system(cmd.c_str());
      std::printf("discovery max_smps %3d: %.2f s%s; ibnetdiscover -o %d: %.2f s%s\n", smps, ours,
                  ok ? "" : " (failed)", smps, since(t2), rc == 0 ? "" : " (failed)");
    }
    // Sweep time per load budget (config mad.*): global and per-node
    // in-flight limits and the MADs/s cap.
    struct Budget {
      int global;
      int node;
      int cap;
    };
    // More than ~200 MADs in flight deadlock umad2sim (its writer blocks on
    // the simulator's full socket while holding the lock its reader needs),
    // so the table stops there (a simulator limit, not a kernel one).
    for (const Budget b :
         {Budget{16, 1, 0}, Budget{64, 2, 0}, Budget{64, 4, 0}, Budget{128, 4, 0},
          Budget{128, 8, 0}, Budget{192, 4, 0}, Budget{128, 4, 20000}, Budget{128, 4, 5000}}) {
      engine.set_limits(
          ibfx::MadEngineLimits{b.global, b.node, std::chrono::milliseconds(1000), 2, b.cap});
      const ibfx::SweepResult r = sweeper.sweep(fabric, options);
      std::printf(
          "sweep global_inflight %3d per_node_inflight %d max_mads_per_second %5d: %.2f s "
          "(%llu MADs, %llu timeouts)\n",
          b.global, b.node, b.cap, r.duration_seconds, static_cast<unsigned long long>(r.mads_sent),
          static_cast<unsigned long long>(r.mads_timeout));
    }
  }
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  // A simulator that does not come up, or a transport that cannot open,
  // throws: said once, not a terminate().
  try {
    return bench_main(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "ibfx_bench: " << e.what() << "\n";
    return 1;
  }
}
