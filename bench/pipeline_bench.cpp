// The daemon's per-sweep pipeline at scale, without a simulator: the real
// Exporter (sweep through MadEngine/Sweeper, accumulate, classify, analyse,
// render, gzip) over a synthetic fabric from the fat-tree generator, whose
// PMAs are answered in-process by a minimal fake. It isolates the daemon's
// own CPU and memory from ibsim's (which needs minutes to bring up a
// 98k-port fabric and answers ~40k MADs/s): render time, gzip time and size,
// scrape cost, peak RSS, and the series each cardinality setting produces.
//
//   ibfx_pipeline_bench --servers 2048 --rails 8 --radix 64 --tiers 3
//
// --cadence SECONDS instead runs the Exporter with its own threads at
// --interval MS (1000) against PMAs that answer like firmware (each node
// serves one MAD at a time, --pma-service-us 20 each, plus --wire-us 10 of
// round trip): the daemon's 1 Hz cadence, ports read per sweep, snapshots
// published and dropped, and the CPU of each of its threads, with the whole
// 2 cores for the daemon (ibsim would take one of them: bench/run).
//
// --routes (with --cadence) also answers the switches' SMPs (SwitchInfo,
// LinearForwardingTable blocks of min-hop tables) with routes.enabled on,
// and reports the route reader's first full read at 1 Hz (issue #41): its
// seconds and SMPs, and the cadence while it ran.
//
// --scrape-groups instead prints, after the sweeps, what a scrape of each
// `collect[]` group and of the two jobs of docs/scale-out.md serves: samples
// (by family, the largest first), identity and gzip bytes; the figures a
// site sizes its time-series store with (samples/s = samples / interval).
#include <dirent.h>
#include <infiniband/mad.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <map>
#include <queue>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "base/log.h"
#include "bench/daemon_route_read.h"
#include "bench/proc_stat.h"
#include "daemon/exporter.h"
#include "daemon/web.h"
#include "exposition/deflate_block_cache.h"
#include "http/gzip_writer.h"
#include "mad/mad_transport.h"
#include "mad/pma.h"
#include "test/sim/cli_args.h"
#include "test/sim/discovered_fabric.h"
#include "test/sim/fabric_gen.h"
#include "test/sim/fat_tree_flags.h"
#include "test/support/fake_pma.h"
#include "test/support/gunzip.h"
#include "test/support/route_tables_builder.h"

namespace {
using ibfx::bench::Clock;
using ibfx::bench::peak_resident_mib;
using ibfx::bench::process_cpu_seconds;
using ibfx::bench::since;
using ibfx::bench::thread_cpu_seconds;

// The generator's wiring as the daemon's discovery would report it: every
// cabled port Active/LinkUp at 4x NDR, LIDs in file order. `real_names`:
// the node descriptions as long as real clusters' ("MF0;LG04-07:MQM8700/U1"
// on a switch, "pg-spd031 mlx5_6" on an HCA), for the exposition's size:
// each port's remote_node_name carries one.
std::shared_ptr<const ibfx::Fabric> discovered(const ibfx::test::Fabric& spec,
                                               bool real_names = false) {
  ibfx::test::DiscoveredLinks links;
  links.speed_ext_active = 8;  // NDR
  links.vendor_id = 0x02c9;
  links.switch_device_id = 54002;
  links.hca_device_id = 4129;
  auto f = std::make_shared<ibfx::Fabric>(ibfx::test::discovered_fabric(spec, links));
  f->discovered_at = std::chrono::system_clock::now();
  if (real_names) {
    for (ibfx::FabricNode& node : f->nodes) {
      node.description = node.type == ibfx::NodeType::kSwitch
                             ? "MF0;" + node.description + ":MQM8700/U1"
                             : "pg-" + node.description;
    }
  }
  return f;
}

// A PMA for every LID with CapabilityMask2.AdditionalPortCountersExtended
// (one MAD per port, as on current switches), counters rising every read.
// Symbol errors count on error_percent % of the ports (a healthy fabric has
// a few flaky links; --error-ports 100 is the worst case for the
// exposition's size, every port erroring).
class FastPma final : public ibfx::MadTransport {
 public:
  explicit FastPma(int error_percent = 1) : error_percent_(error_percent) {}
  bool send(std::uint16_t lid, const ibfx::MadBytes& mad, std::chrono::milliseconds) override {
    ibfx::MadBytes resp = mad;
    std::uint8_t* m = resp.data();
    mad_set_field(m, 0, IB_MAD_METHOD_F, 0x81);
    std::uint8_t* data = m + ibfx::kPmaDataOffset;
    const auto attr = ibfx::mad_attr_id(mad);
    if (attr == ibfx::kAttrClassPortInfo) {
      mad_set_field(
          data, 0, IB_CPI_CAPMASK_F,
          ibfx::pma_cap::kExtWidth | ibfx::pma_cap::kXmitWait | ibfx::pma_cap::kAllPortSelect);
      mad_set_field(data, 0, IB_CPI_CAPMASK2_F, ibfx::pma_cap::kAddlPortCountersExt);
    } else if (attr == ibfx::kAttrPortSamplesControl) {
      mad_set_field(data, 0, IB_PSC_TICK_F, 7);
    } else if (attr == ibfx::kAttrPortCountersExtended) {
      const auto port = mad_get_field(data, 0, IB_PC_EXT_PORT_SELECT_F);
      const std::uint64_t h = (std::uint64_t{lid} * 2654435761ULL) ^ (port * 40503ULL);
      const std::uint64_t t = ++reads_;
      mad_set_field64(data, 0, IB_PC_EXT_XMT_BYTES_F, t * (h % 100000 + 1));
      mad_set_field64(data, 0, IB_PC_EXT_RCV_BYTES_F, t * (h % 90000 + 1));
      mad_set_field64(data, 0, IB_PC_EXT_XMT_PKTS_F, t * (h % 1000 + 1));
      mad_set_field64(data, 0, IB_PC_EXT_RCV_PKTS_F, t * (h % 900 + 1));
      mad_set_field64(data, 0, IB_PC_EXT_XMT_UPKTS_F, t * (h % 800 + 1));
      mad_set_field64(data, 0, IB_PC_EXT_RCV_UPKTS_F, t * (h % 700 + 1));
      mad_set_field64(data, 0, IB_PC_EXT_XMT_MPKTS_F, t % 7);
      mad_set_field64(data, 0, IB_PC_EXT_RCV_MPKTS_F, t % 5);
      mad_set_field64(data, 0, IB_PC_EXT_XMT_WAIT_F, t * (h % 5000));
      const bool erroring = static_cast<int>((h >> 7) % 100) < error_percent_;
      mad_set_field64(data, 0, IB_PC_EXT_ERR_SYM_F, erroring ? t / 1000 + 1 : 0);
    } else {
      mad_set_field(m, 0, IB_MAD_STATUS_F, 0x0C);  // unsupported attribute
    }
    queue_.push_back(resp);
    return true;
  }
  ibfx::Received receive(std::chrono::milliseconds) override {
    ibfx::Received r;
    if (queue_.empty()) return r;
    r.kind = ibfx::Received::Kind::kResponse;
    r.mad = queue_.front();
    queue_.pop_front();
    return r;
  }

 private:
  std::deque<ibfx::MadBytes> queue_;
  std::uint64_t reads_ = 0;
  int error_percent_;
};

// A fabric whose PMAs answer the way switch and HCA firmware does, for the
// daemon's own 1 Hz cadence (--cadence): each node serves its MADs one at a
// time, `service` each, and its answer arrives `wire` later (the round trip
// through the switches). Answers are made by FastPma. Called only from the
// sweep thread, as every MadTransport is, so it needs no lock and no thread.
// With `smas` (--routes) it has QP0 too: SMPs (NodeInfo, and the route
// reader's SwitchInfo and LinearForwardingTable, IBA 14.2.5.4 / 14.2.5.10)
// are answered by those SMAs, and queue behind the same node's PMA reads,
// since a switch's SMA and PMA share its one management CPU.
class FirmwarePma final : public ibfx::MadTransport {
 public:
  FirmwarePma(int error_percent, std::chrono::microseconds service, std::chrono::microseconds wire,
              std::unique_ptr<ibfx::test::FakePma> smas = nullptr)
      : answers_(error_percent),
        smas_(std::move(smas)),
        service_(service),
        wire_(wire),
        busy_(65536) {}
  bool supports_smp() const override { return smas_ != nullptr; }
  bool send(std::uint16_t lid, const ibfx::MadBytes& mad, std::chrono::milliseconds t) override {
    const bool smp = smas_ && mad_get_field(const_cast<std::uint8_t*>(mad.data()), 0,
                                            IB_MAD_MGMTCLASS_F) == IB_SMI_CLASS;
    ibfx::MadTransport& to = smp ? static_cast<ibfx::MadTransport&>(*smas_) : answers_;
    to.send(lid, mad, t);
    const ibfx::Received r = to.receive(std::chrono::milliseconds(0));
    if (r.kind != ibfx::Received::Kind::kResponse) return true;  // nobody at that LID
    Clock::time_point& busy = busy_[lid];
    busy = std::max(busy, Clock::now()) + service_;
    due_.push(Due{busy + wire_, r.mad});
    return true;
  }
  ibfx::Received receive(std::chrono::milliseconds wait) override {
    ibfx::Received r;
    const auto until = Clock::now() + wait;
    if (due_.empty()) {
      std::this_thread::sleep_until(until);
      return r;
    }
    if (due_.top().at > Clock::now()) std::this_thread::sleep_until(std::min(due_.top().at, until));
    if (due_.top().at > Clock::now()) return r;
    r.kind = ibfx::Received::Kind::kResponse;
    r.mad = due_.top().mad;
    due_.pop();
    return r;
  }

 private:
  struct Due {
    Clock::time_point at;
    ibfx::MadBytes mad;
    bool operator>(const Due& o) const { return at > o.at; }
  };
  FastPma answers_;
  std::unique_ptr<ibfx::test::FakePma> smas_;
  std::chrono::microseconds service_;
  std::chrono::microseconds wire_;
  std::vector<Clock::time_point> busy_;  // by LID: when the node's PMA is free again
  std::priority_queue<Due, std::vector<Due>, std::greater<>> due_;
};

// The SMAs of `fabric` for --routes: every node's NodeInfo, and each
// switch's SwitchInfo and LinearForwardingTable as a min-hop subnet manager
// would have set them (test/support/route_tables_builder.h).
std::unique_ptr<ibfx::test::FakePma> switch_smas(const ibfx::Fabric& fabric) {
  auto smas = std::make_unique<ibfx::test::FakePma>(ibfx::test::fake_for(fabric));
  smas->smp = true;
  for (const ibfx::SwitchRoutes& s : ibfx::test::min_hop_tables(fabric).switches) {
    ibfx::test::FakeNode& node = smas->nodes[s.lid];
    node.sma_switch = true;
    node.lft = s.out_port;
  }
  return smas;
}

// The value of an unlabelled sample in exposition text, or -1.
double sample_value(const std::string& text, const std::string& name) {
  const std::string key = "\n" + name + " ";
  const auto at = text.find(key);
  if (at == std::string::npos) return -1;
  return std::strtod(text.c_str() + at + key.size(), nullptr);
}

// CPU seconds of this process's threads by name (base/thread_name.h); the
// deflate threads come and go, so what is not named is the process total
// less the rest.
std::map<std::string, double> thread_cpu_by_name() {
  std::map<std::string, double> out;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return out;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    const ibfx::bench::ProcStat stat =
        ibfx::bench::read_proc_stat(std::string("/proc/self/task/") + e->d_name + "/stat");
    if (stat.ok) out[stat.comm] += stat.cpu;
  }
  closedir(dir);
  return out;
}

// The real Exporter with its threads at `interval` for `seconds` (after a
// warm-up), against FirmwarePma: the daemon's cadence, coverage, publications
// and CPU at 1 Hz when the fabric, not a simulator on the same cores,
// answers the MADs.
int run_cadence(const std::shared_ptr<const ibfx::Fabric>& fabric, int seconds,
                std::chrono::milliseconds interval, std::chrono::microseconds service,
                std::chrono::microseconds wire, int error_percent, bool routes) {
  ibfx::Config config;
  config.sweep_interval = interval;
  // Without --routes the transport has no QP0, so the route reader would
  // never run anyway; off says so.
  config.routes.enabled = routes;
  auto smas = routes ? switch_smas(*fabric) : nullptr;
  ibfx::Exporter exporter(
      config, {}, std::make_unique<FirmwarePma>(error_percent, service, wire, std::move(smas)),
      [fabric] {
        return ibfx::DiscoveryResult{fabric, {}};
      });
  std::printf("cadence: interval %lld ms, %d s, PMA service %lld us a MAD per node, wire %lld us\n",
              static_cast<long long>(interval.count()), seconds,
              static_cast<long long>(service.count()), static_cast<long long>(wire.count()));
  if (routes) {
    std::printf("routes: on, SMAs answer SwitchInfo and LinearForwardingTable, %d SMPs/s\n",
                config.routes.smps_per_second);
  }
  const auto started = Clock::now();
  exporter.start();
  struct Totals {
    double sweeps, overruns, published, dropped, cpu;
    std::map<std::string, double> threads;
  };
  auto totals = [&exporter] {
    const auto snap = exporter.snapshot();
    const std::string& m = snap ? snap->exporter_metrics_text : std::string();
    return Totals{sample_value(m, "infiniband_exporter_sweeps_total"),
                  sample_value(m, "infiniband_exporter_sweep_overruns_total"),
                  sample_value(m, "infiniband_exporter_snapshots_published_total"),
                  sample_value(m, "infiniband_exporter_snapshots_dropped_total"),
                  process_cpu_seconds(),
                  thread_cpu_by_name()};
  };
  // Every snapshot served from the start (warm-up included), for the
  // cadence while the first full read of the forwarding tables ran.
  struct Seen {
    double finished;  // the sweep's end, Unix seconds
    double sweeps, overruns, full_reads;
    std::size_t ports;
  };
  std::vector<Seen> seen;
  std::shared_ptr<const ibfx::Snapshot> first_read;  // the first one after a full read
  double first_read_at = 0;                          // seconds from the start
  const ibfx::Snapshot* last = nullptr;
  auto next_snapshot = [&]() -> std::shared_ptr<const ibfx::Snapshot> {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    auto snap = exporter.snapshot();
    if (!snap || snap.get() == last) return nullptr;
    last = snap.get();
    const std::string& m = snap->exporter_metrics_text;
    seen.push_back(Seen{snap->sweep_timestamp_seconds,
                        sample_value(m, "infiniband_exporter_sweeps_total"),
                        sample_value(m, "infiniband_exporter_sweep_overruns_total"),
                        sample_value(m, "infiniband_exporter_route_full_reads_total"),
                        snap->sweep_totals.ports_read});
    if (!first_read && seen.back().full_reads >= 1) {
      first_read = snap;
      first_read_at = since(started);
    }
    return snap;
  };
  // Warm-up: discovery, the first sweep's ClassPortInfo, the first renders.
  while (since(started) < 10) next_snapshot();
  const Totals a = totals();
  const auto start = Clock::now();
  std::vector<double> sweep_s, render_s, reused;
  std::vector<std::size_t> ports;
  const std::size_t window_from = seen.size();
  while (since(start) < seconds) {
    const auto snap = next_snapshot();
    if (!snap) continue;
    sweep_s.push_back(snap->sweep_totals.duration_seconds);
    ports.push_back(snap->sweep_totals.ports_read);
    render_s.push_back(sample_value(snap->exporter_metrics_text,
                                    "infiniband_exporter_last_render_duration_seconds"));
    reused.push_back(
        sample_value(snap->exporter_metrics_text, "infiniband_exporter_last_render_reused_ratio"));
  }
  const double window = since(start);
  const Totals b = totals();
  exporter.stop();
  auto mean = [](const auto& v) {
    double sum = 0;
    for (const auto x : v) sum += static_cast<double>(x);
    return v.empty() ? 0.0 : sum / static_cast<double>(v.size());
  };
  auto max = [](const auto& v) {
    return v.empty() ? 0.0 : static_cast<double>(*std::max_element(v.begin(), v.end()));
  };
  auto min = [](const auto& v) {
    return v.empty() ? 0.0 : static_cast<double>(*std::min_element(v.begin(), v.end()));
  };
  // The longest time between two served sweeps' ends in seen[from, to): a
  // missed beat shows as a gap of two intervals or more, and so does a
  // snapshot dropped while the one before was still being rendered.
  auto longest_gap = [&seen](std::size_t from, std::size_t to) {
    double gap = 0;
    for (std::size_t i = from + 1; i < to && i < seen.size(); ++i) {
      gap = std::max(gap, seen[i].finished - seen[i - 1].finished);
    }
    return gap;
  };
  const double sweeps = b.sweeps - a.sweeps;
  std::printf("cadence: %.0f sweeps in %.1f s (one every %.3f s), %.0f overruns\n", sweeps, window,
              sweeps > 0 ? window / sweeps : 0.0, b.overruns - a.overruns);
  std::printf("cadence: %.0f snapshots published, %.0f dropped; %zu seen served\n",
              b.published - a.published, b.dropped - a.dropped, ports.size());
  std::printf("cadence: ports read per served sweep: mean %.0f, min %.0f of %zu\n", mean(ports),
              min(ports), fabric->port_count());
  std::printf("cadence: longest gap between served sweeps %.3f s\n",
              longest_gap(window_from, seen.size()));
  std::printf(
      "cadence: sweep mean %.3f / max %.3f s; render+gzip (of the one before) mean %.3f / "
      "max %.3f s\n",
      mean(sweep_s), max(sweep_s), mean(render_s), max(render_s));
  std::printf("cadence: text reused from the snapshot before (DeflateBlockCache): mean %.1f %%\n",
              100 * mean(reused));
  // The daemon's named threads (base/thread_name.h); the rest is mostly the
  // publisher's deflate threads, which come and go.
  double named = 0;
  std::printf("cadence: CPU s/s: process %.2f", (b.cpu - a.cpu) / window);
  for (const auto& [name, cpu] : b.threads) {
    if (name.rfind("ibfx-", 0) != 0) continue;
    const auto before = a.threads.find(name);
    const double used = cpu - (before == a.threads.end() ? 0.0 : before->second);
    named += used;
    std::printf(", %s %.2f", name.c_str(), used / window);
  }
  std::printf(", other threads (deflate, ...) %.2f\n", ((b.cpu - a.cpu) - named) / window);
  if (routes) {
    // infiniband_exporter_route_smps_total by result, in a scrape's series.
    auto smps = [](const std::map<std::string, double>& s, const std::string& result) {
      return ibfx::bench::series_or(
          s, "infiniband_exporter_route_smps_total{result=\"" + result + "\"}");
    };
    // The first full read: from the first served sweep (which carried its
    // first SMPs) to the first served after it ended.
    if (!first_read) {
      // How far it got: the last snapshot served.
      const auto snap = exporter.snapshot();
      const auto s = ibfx::bench::exporter_series(snap ? snap->exporter_metrics_text : "");
      std::printf(
          "routes: no full read finished within %.0f s; %.0f tables, %.0f incomplete; SMPs "
          "answered %.0f, failed %.0f, cancelled %.0f\n",
          since(started), ibfx::bench::series_or(s, "infiniband_exporter_route_tables"),
          ibfx::bench::series_or(s, "infiniband_exporter_route_tables_incomplete"),
          smps(s, "answered"), smps(s, "failed"), smps(s, "cancelled"));
    } else {
      const auto s = ibfx::bench::exporter_series(first_read->exporter_metrics_text);
      std::size_t end = 0;
      while (end < seen.size() && seen[end].full_reads < 1) ++end;
      std::vector<std::size_t> read_ports;
      for (std::size_t i = 0; i <= end && i < seen.size(); ++i) read_ports.push_back(seen[i].ports);
      std::printf(
          "routes: first full read %.1f s (infiniband_exporter_route_full_read_seconds), seen "
          "%.1f s after the start; %.0f tables, %.0f incomplete\n",
          ibfx::bench::series_or(s, "infiniband_exporter_route_full_read_seconds"), first_read_at,
          ibfx::bench::series_or(s, "infiniband_exporter_route_tables"),
          ibfx::bench::series_or(s, "infiniband_exporter_route_tables_incomplete"));
      std::printf("routes: SMPs answered %.0f, failed %.0f, cancelled %.0f\n", smps(s, "answered"),
                  smps(s, "failed"), smps(s, "cancelled"));
      std::printf(
          "routes: during the read: %.0f sweeps, %.0f overruns, ports read per served sweep mean "
          "%.0f / min %.0f, longest gap between served sweeps %.3f s\n",
          seen[end].sweeps - seen.front().sweeps, seen[end].overruns - seen.front().overruns,
          mean(read_ports), min(read_ports), longest_gap(0, end + 1));
    }
  }
  std::printf("peak RSS: %.0f MiB\n", peak_resident_mib());
  return 0;
}

struct Counted {
  std::size_t samples = 0;
  std::size_t bytes = 0;
};
Counted count_samples(const ibfx::Snapshot& snap) {
  Counted counted;
  std::size_t& samples = counted.samples;
  ibfx::render_exposition(snap, [&](std::string_view piece) {
    counted.bytes += piece.size();
    std::size_t line_start = 0;
    for (std::size_t i = 0; i < piece.size(); ++i) {
      if (piece[i] != '\n') continue;
      if (piece[line_start] != '#') ++samples;
      line_start = i + 1;
    }
  });
  return counted;
}

// Pulls a whole /metrics body through the web handler, as a scrape would.
std::pair<double, std::size_t> scrape(const ibfx::Exporter& exporter, bool gzip,
                                      const std::string& query = "") {
  ibfx::HttpRequest req;
  req.method = "GET";
  req.path = "/metrics";
  req.target = "/metrics" + query;
  req.accepts_gzip = gzip;
  const auto t = Clock::now();
  ibfx::HttpResponse res = ibfx::handle_web(exporter, req);
  std::size_t bytes = 0;
  std::string piece;
  bool more = res.stream.has_value();
  while (more) {
    more = res.stream->next(piece);
    bytes += piece.size();
  }
  bytes += res.body.size();
  return {since(t), bytes};
}

// What one identity scrape serves: samples per family (a histogram's
// _bucket, _sum and _count lines count for the family its # TYPE names),
// streamed line by line across the response's pieces.
struct ScrapeCount {
  std::map<std::string, std::size_t> by_family;
  std::size_t samples = 0;
  std::size_t bytes = 0;
};
ScrapeCount count_scrape(const ibfx::Exporter& exporter, const std::string& query) {
  ibfx::HttpRequest req;
  req.method = "GET";
  req.path = "/metrics";
  req.target = "/metrics" + query;
  req.accepts_gzip = false;
  ibfx::HttpResponse res = ibfx::handle_web(exporter, req);
  ScrapeCount c;
  std::string family;
  std::string line;  // a line split across two pieces
  auto take = [&](std::string_view piece) {
    c.bytes += piece.size();
    for (std::size_t at = 0; at < piece.size();) {
      const std::size_t nl = piece.find('\n', at);
      line.append(piece.substr(at, nl == std::string_view::npos ? piece.npos : nl - at));
      if (nl == std::string_view::npos) break;
      at = nl + 1;
      if (line.rfind("# TYPE ", 0) == 0) {
        family = line.substr(7, line.find(' ', 7) - 7);
      } else if (!line.empty() && line[0] != '#') {
        ++c.samples;
        ++c.by_family[family];
      }
      line.clear();
    }
  };
  take(res.body);
  std::string piece;
  for (bool more = res.stream.has_value(); more;) {
    more = res.stream->next(piece);
    take(piece);
  }
  return c;
}

// --scrape-groups: each group alone, then the two jobs of the two-cadence
// layout (docs/scale-out.md) and the whole exposition.
void print_scrape_groups(const ibfx::Exporter& exporter, std::size_t ports) {
  const std::pair<const char*, std::string> selections[] = {
      {"aggregates", "?collect[]=aggregates"},
      {"ports", "?collect[]=ports"},
      {"nodes", "?collect[]=nodes"},
      {"ports+nodes (slow job)", "?collect[]=ports&collect[]=nodes"},
      {"everything", ""}};
  for (const auto& [name, query] : selections) {
    const ScrapeCount c = count_scrape(exporter, query);
    const auto [gz_s, gz_bytes] = scrape(exporter, true, query);
    std::printf(
        "scrape group %-24s %9zu samples (%.2f per port), identity %11zu bytes, gzip %10zu "
        "bytes (%.4f s)\n",
        name, c.samples, static_cast<double>(c.samples) / static_cast<double>(ports), c.bytes,
        gz_bytes, gz_s);
    if (query == "?collect[]=aggregates" || query == "?collect[]=ports" ||
        query == "?collect[]=nodes") {
      std::vector<std::pair<std::size_t, std::string>> families;
      for (const auto& [family, n] : c.by_family) families.emplace_back(n, family);
      std::sort(families.rbegin(), families.rend());
      for (std::size_t i = 0; i < families.size() && i < 12; ++i) {
        std::printf("  %-60s %9zu\n", families[i].second.c_str(), families[i].first);
      }
    }
  }
}
}  // namespace

int main(int argc, char** argv) {
  // The large bench fabric every figure of docs/benchmarks.md is measured on.
  ibfx::test::FatTreeSpec spec = ibfx::test::preset_16k();
  int sweeps = 3;
  int error_percent = 1;       // --error-ports PERCENT: ports whose symbol errors count
  std::string dump;            // --dump FILE: the full exposition, for per-family measurements
  bool scrape_groups = false;  // --scrape-groups: samples and bytes per collect[] group, then exit
  int cadence = 0;             // --cadence SECONDS: the Exporter's own threads at --interval
  int interval_ms = 1000;
  int service_us = 20;      // --pma-service-us: a node's PMA time per MAD
  int wire_us = 10;         // --wire-us: the round trip through the switches
  bool routes = false;      // --routes: the switches' SMAs answer, routes.enabled on (--cadence)
  bool real_names = false;  // --real-names: node descriptions as long as real clusters'
  try {
    ibfx::test::ArgReader args(argc, argv);
    auto number = [&args] { return static_cast<int>(args.integer(1, 1 << 20)); };
    while (args.next()) {
      if (ibfx::test::read_fat_tree_flag(args, spec))
        continue;
      else if (args.is("--sweeps"))
        sweeps = number();
      else if (args.is("--error-ports"))
        error_percent = static_cast<int>(args.integer(0, 100));
      else if (args.is("--dump"))
        dump = args.value();
      else if (args.is("--scrape-groups")) {
        args.no_value();
        scrape_groups = true;
      } else if (args.is("--cadence"))
        cadence = number();
      else if (args.is("--interval"))
        interval_ms = number();
      else if (args.is("--pma-service-us"))
        service_us = static_cast<int>(args.integer(0, 1000000));
      else if (args.is("--wire-us"))
        wire_us = static_cast<int>(args.integer(0, 1000000));
      else if (args.is("--routes")) {
        args.no_value();
        routes = true;
      } else if (args.is("--real-names")) {
        args.no_value();
        real_names = true;
      } else
        args.unknown();
    }
  } catch (const ibfx::test::UsageError& e) {
    std::cerr << "ibfx_pipeline_bench: " << e.what() << "\n";
    return 2;
  }
  ibfx::set_log_level(ibfx::LogLevel::kWarn);
  const auto fabric = discovered(ibfx::test::make_fat_tree(spec), real_names);
  std::printf("fabric: %d servers x %d rails, %d tiers: %zu nodes, %zu ports; RSS %.0f MiB\n",
              spec.servers, spec.rails, spec.tiers, fabric->nodes.size(), fabric->port_count(),
              peak_resident_mib());
  if (cadence > 0) {
    return run_cadence(fabric, cadence, std::chrono::milliseconds(interval_ms),
                       std::chrono::microseconds(service_us), std::chrono::microseconds(wire_us),
                       error_percent, routes);
  }

  {
    // The engine's own ceiling: sweeps against a PMA that answers at once.
    FastPma pma;
    ibfx::MadEngine engine(pma,
                           ibfx::MadEngineLimits{128, 4, std::chrono::milliseconds(1000), 2, 0});
    ibfx::CounterAccumulator acc;
    ibfx::Sweeper sweeper(engine, acc);
    sweeper.sweep(*fabric, {});
    const ibfx::SweepResult r = sweeper.sweep(*fabric, {});
    std::printf("sweep engine alone (instant PMA): %.3f s for %llu MADs (%.0f MADs/s)\n",
                r.duration_seconds, static_cast<unsigned long long>(r.mads_sent),
                static_cast<double>(r.mads_sent) / r.duration_seconds);
    // A sweep's fixed cost beyond its budget: every read queued, then, the
    // budget gone at once, every one cancelled and the nodes' state kept
    // (what a sweep cut short at a 1 s interval pays after its deadline).
    ibfx::SweepOptions cut;
    cut.budget = std::chrono::milliseconds(0);
    const ibfx::SweepResult c = sweeper.sweep(*fabric, cut);
    std::printf("sweep cut at once by its budget: %.3f s (%llu MADs cancelled)\n",
                c.duration_seconds, static_cast<unsigned long long>(engine.stats().cancelled));
  }
  ibfx::Config config;
  config.mad.global_inflight = 256;
  ibfx::Exporter exporter(config, {}, std::make_unique<FastPma>(error_percent), [fabric] {
    return ibfx::DiscoveryResult{fabric, {}};
  });
  exporter.discover_now();
  for (int i = 0; i < sweeps; ++i) {
    const auto t = Clock::now();
    exporter.sweep_now();
    std::printf("sweep+publish %d: %.3f s (RSS %.0f MiB)\n", i + 1, since(t), peak_resident_mib());
  }
  if (scrape_groups) {
    print_scrape_groups(exporter, fabric->port_count());
    std::printf("peak RSS: %.0f MiB\n", peak_resident_mib());
    return 0;
  }
  const auto snap = exporter.snapshot();
  if (!dump.empty()) {
    std::FILE* out = std::fopen(dump.c_str(), "w");
    if (out == nullptr) {
      std::perror(dump.c_str());
      return 1;
    }
    render_exposition(
        *snap, [out](std::string_view piece) { std::fwrite(piece.data(), 1, piece.size(), out); });
    std::fclose(out);
  }

  double render_s = 1e9;
  double render_cpu = 1e9;  // this thread's CPU time: what the render costs on a shared machine
  std::size_t text_bytes = 0;
  for (int i = 0; i < 3; ++i) {
    const auto t = Clock::now();
    const double cpu = thread_cpu_seconds();
    std::size_t bytes = 0;
    render_exposition(*snap, [&bytes](std::string_view piece) { bytes += piece.size(); });
    render_s = std::min(render_s, since(t));
    render_cpu = std::min(render_cpu, thread_cpu_seconds() - cpu);
    text_bytes = bytes;
  }
  for (unsigned threads : {1u, 2u}) {
    const auto t = Clock::now();
    const double cpu = process_cpu_seconds();  // no other thread of this process runs meanwhile
    ibfx::test::ParallelGzipWriter gz(ibfx::kGzipFast, threads);
    render_exposition(*snap, [&gz](std::string_view piece) { gz.write(piece); });
    const std::string out = gz.finish();
    std::printf("render+parallel gzip level 1, %u threads: %.3f s (%.3f CPU-s), %zu bytes\n",
                threads, since(t), process_cpu_seconds() - cpu, out.size());
  }
  for (int level : {ibfx::kGzipFast, ibfx::kGzipDefault}) {
    const auto t = Clock::now();
    ibfx::GzipWriter gz(level);
    render_exposition(*snap, [&gz](std::string_view piece) { gz.write(piece); });
    const std::string out = gz.finish();
    std::printf("render+gzip level %d: %.3f s, %zu bytes\n", level == ibfx::kGzipFast ? 1 : 6,
                since(t), out.size());
  }
  std::printf("render (text only, best of 3): %.3f s (%.3f CPU-s), %zu bytes, %zu samples\n",
              render_s, render_cpu, text_bytes, count_samples(*snap).samples);
  {
    // The publisher's step on fresh copies of the snapshot: every group
    // rendered once (with its node index) into the parallel deflater, one
    // deflate run per group; next to it, alternating, what the publisher did
    // before (the full text into one parallel gzip, the aggregates group
    // rendered and gzipped again; ports and nodes were rendered at their
    // first scrape). Best of 3 each, wall and CPU (all threads).
    const unsigned threads = std::clamp(std::thread::hardware_concurrency(), 1u, 4u);
    double best = 1e9, best_cpu = 1e9, old_best = 1e9, old_cpu = 1e9;
    std::size_t bytes = 0;
    for (int i = 0; i < 3; ++i) {
      const ibfx::Snapshot& copy = *snap;
      auto t = Clock::now();
      double c = process_cpu_seconds();
      const ibfx::RenderedExposition rendered = ibfx::RenderedExposition::build(copy);
      best = std::min(best, since(t));
      best_cpu = std::min(best_cpu, process_cpu_seconds() - c);
      bytes = 0;
      for (const ibfx::DeflateRun* r : rendered.runs()) bytes += r->bytes.size();

      t = Clock::now();
      c = process_cpu_seconds();
      ibfx::test::ParallelGzipWriter gz(ibfx::kGzipFast, threads);
      ibfx::render_exposition(copy, [&gz](std::string_view piece) { gz.write(piece); });
      const std::string full = gz.finish();
      ibfx::GzipWriter agg(ibfx::kGzipFast);
      ibfx::render_group(copy, ibfx::RenderGroup::kAggregates,
                         [&agg](std::string_view piece) { agg.write(piece); });
      const std::string aggregates = agg.finish();
      old_best = std::min(old_best, since(t));
      old_cpu = std::min(old_cpu, process_cpu_seconds() - c);
    }
    std::printf(
        "publisher step (RenderedExposition::build: 3 groups rendered once, deflated on %u "
        "threads): best %.3f s, %.3f CPU-s, %zu deflate bytes held\n",
        threads, best, best_cpu, bytes);
    std::printf(
        "publisher step before (full text into one parallel gzip + aggregates again): "
        "best %.3f s, %.3f CPU-s\n",
        old_best, old_cpu);
    // The publisher step with the deflate cache warmed by the snapshot
    // before (exposition/deflate_block_cache.h), as the daemon runs it: (a) the
    // same data again, a quiet fabric's best case; (b) the next sweep's
    // data, where FastPma makes every traffic counter rise on every read, a
    // busy fabric. Best of 3 each, a fresh cache warmed each time.
    exporter.sweep_now();
    const auto next = exporter.snapshot();
    struct Case {
      const char* name;
      const ibfx::Snapshot* data;
    };
    for (const Case& c : {Case{"same data", snap.get()}, Case{"next sweep's data", next.get()}}) {
      double wall = 1e9, cpu = 1e9, ratio = 0;
      std::size_t held = 0;
      for (int i = 0; i < 3; ++i) {
        ibfx::DeflateBlockCache cache;
        ibfx::RenderedExposition::build(*snap, &cache);  // warms the cache
        const auto t = Clock::now();
        const double c0 = process_cpu_seconds();
        const ibfx::RenderedExposition copy = ibfx::RenderedExposition::build(*c.data, &cache);
        wall = std::min(wall, since(t));
        cpu = std::min(cpu, process_cpu_seconds() - c0);
        const ibfx::RenderedExposition::Stats st = copy.stats();
        ratio = static_cast<double>(st.reused_bytes) /
                static_cast<double>(st.reused_bytes + st.deflated_bytes);
        held = 0;
        for (const ibfx::DeflateRun* r : copy.runs()) held += r->bytes.size();
      }
      std::printf(
          "publisher step with the deflate cache warm, %s: best %.3f s, %.3f CPU-s, %.1f %% of "
          "the text reused, %zu deflate bytes held\n",
          c.name, wall, cpu, 100 * ratio, held);
    }
    // What recording the node index costs the render of the ports group.
    double plain = 1e9, indexed = 1e9;
    for (int i = 0; i < 3; ++i) {
      std::size_t n = 0;
      auto t = Clock::now();
      render_group(*snap, ibfx::RenderGroup::kPorts, [&n](std::string_view p) { n += p.size(); });
      plain = std::min(plain, since(t));
      ibfx::ExpositionIndex index;
      t = Clock::now();
      render_group(
          *snap, ibfx::RenderGroup::kPorts, [&n](std::string_view p) { n += p.size(); },
          std::size_t{1} << 20, &index);
      indexed = std::min(indexed, since(t));
    }
    std::printf("ports group text render: %.3f s, with its node index %.3f s\n", plain, indexed);
  }
  // Every scrape serves what the publisher compressed: the web handler only
  // reads the publication (daemon/web.cpp). Best of 3 each.
  auto best_scrape = [&exporter](bool gzip, const std::string& query) {
    std::pair<double, std::size_t> best{1e9, 0};
    for (int i = 0; i < 3; ++i) {
      const auto r = scrape(exporter, gzip, query);
      if (r.first < best.first) best = r;
    }
    return best;
  };
  const std::string node = "?node=" + ibfx::guid_hex(snap->fabric->nodes[0].guid);
  for (const std::string& query :
       {std::string(), std::string("?collect[]=aggregates"), std::string("?collect[]=ports"),
        std::string("?collect[]=nodes"), std::string("?collect[]=nodes&collect[]=aggregates"),
        std::string("?collect[]=ports&collect[]=aggregates"), node}) {
    const auto [gz_s, gz_bytes] = best_scrape(true, query);
    const auto [id_s, id_bytes] = best_scrape(false, query);
    std::printf("scrape /metrics%s: gzip %.4f s, %zu bytes; identity %.4f s, %zu bytes\n",
                query.c_str(), gz_s, gz_bytes, id_s, id_bytes);
  }
  std::printf("peak RSS: %.0f MiB\n", peak_resident_mib());

  // Series per cardinality setting (config `export:`), same snapshot data.
  struct Setting {
    const char* name;
    ibfx::ExportConfig ex;
  };
  const Setting settings[] = {
      {"default", {}},
      {"+ zero error counters", {.zero_error_counters = true}},
      {"+ raw PortXmitWait counts", {.raw_transmit_wait = true}},
      {"+ per-port scores", {.port_scores = true}},
      {"no HCA port counters", {.hca_port_counters = false}},
      {"no error counters", {.error_counters = false}},
      {"no traffic counters", {.traffic_counters = false}},
      {"switch ports, XmitWait + errors only",
       {.hca_port_counters = false, .traffic_counters = false}},
      {"aggregates only", {.port_counters = false}},
  };
  for (const Setting& s : settings) {
    ibfx::Snapshot copy = *snap;
    copy.exporting = s.ex;
    const Counted c = count_samples(copy);
    std::printf("series: %-40s %9zu series, %11zu bytes: %6.1f series, %6.0f bytes per port\n",
                s.name, c.samples, c.bytes,
                static_cast<double>(c.samples) / static_cast<double>(fabric->port_count()),
                static_cast<double>(c.bytes) / static_cast<double>(fabric->port_count()));
  }
  return 0;
}
