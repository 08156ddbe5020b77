// The receipt tracker (receipts/receipt_tracker.h) on hand-built sweeps:
// the stall split adds up and names who fed the trees, jobs sharing hosts,
// jobs shorter than a sweep, a job source that goes down while jobs end,
// save and restore, link issues, the cross-spine share on routes and on
// uplinks; and judge_receipt alone.
#include "receipts/receipt_tracker.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "routing/route_model.h"
#include "test/support/fabric_builder.h"
#include "test/support/route_tables_builder.h"

using namespace ibfx;
using namespace std::chrono_literals;

namespace {

constexpr double kInterval = 10;
constexpr double kTrackerT0 = 1'700'000'000;  // a sweep time on a minute boundary + 20 s

// Port `port_index` of node `node` analysed, valid, rail 0, over one interval.
void add_receipt_port(SweepAnalysis& analysis, int node, std::uint32_t port_index, Tier tier,
                      PortDirection direction = PortDirection::kNone) {
  PortScore s;
  s.node = node;
  s.port_index = port_index;
  s.tier = tier;
  s.direction = direction;
  s.rail = 0;
  s.valid = true;
  analysis.result.ports.push_back(s);
  PortSample sample;
  sample.node = node;
  sample.port_index = port_index;
  sample.interval_seconds = kInterval;
  analysis.samples.push_back(sample);
  analysis.interval_seconds = kInterval;
}

// What a sweep hands the tracker, set by the fixtures below.
class ReceiptSweepParts {
 public:
  explicit ReceiptSweepParts(ReceiptsConfig config = {}) : tracker(config) {}

  // Analysed port `port` sent `bytes` this sweep (PortXmitData: 4-byte words).
  void sent(std::size_t port, std::uint64_t bytes) {
    analysis.samples[port].xmit_data_words = bytes / 4;
  }

  // One sweep at `now`, with the job list as set, polled at `polled`
  // (default: now); `listed` false: no list at all.
  std::vector<JobReceipt> sweep(bool listed = true, double polled = -1) {
    ReceiptSweepInput in;
    in.now = now;
    if (listed) {
      list = std::make_shared<const std::vector<SlurmJob>>(jobs);
      in.jobs = list;
      in.jobs_polled_at = polled < 0 ? now : polled;
      in.ended = std::make_shared<const std::vector<SlurmJobEnd>>(ended);
      in.join = &join;
    }
    in.source_up = listed;
    in.fabric = fabric.get();
    in.analysis = &analysis;
    in.routes = &routes;
    in.links = &links;
    return tracker.observe(in);
  }

  double now = kTrackerT0;
  std::shared_ptr<const Fabric> fabric;
  SweepAnalysis analysis;
  RouteSweep routes;
  LinkHealthReport links;
  std::vector<SlurmJob> jobs;
  std::vector<SlurmJobEnd> ended;  // what the list shows ended
  std::shared_ptr<const std::vector<SlurmJob>> list;
  JobJoinResult join;
  ReceiptTracker tracker;
};

// A leaf with `hosts` HCAs "gpu0<k> mlx5_0" cabled to it. Analysed port
// 2k is host k's HCA port, 2k + 1 the leaf port into it.
class Sweeps : public ReceiptSweepParts {
 public:
  explicit Sweeps(int hosts, ReceiptsConfig config = {}) : ReceiptSweepParts(config) {
    test::FabricBuilder b;
    const int leaf = b.add_switch("leaf0");
    for (int k = 0; k < hosts; ++k) b.link(leaf, b.add_hca("gpu0" + std::to_string(k) + " mlx5_0"));
    fabric = std::make_shared<const Fabric>(b.build());
    for (int k = 0; k < hosts; ++k) {
      add_receipt_port(analysis, k + 1, 0, Tier::kHca);
      add_receipt_port(analysis, 0, static_cast<std::uint32_t>(k), Tier::kLeaf);
    }
    reset();
  }

  static std::size_t hca(int host) { return 2 * static_cast<std::size_t>(host); }
  static std::size_t leaf_into(int host) { return hca(host) + 1; }

  // A job on hosts `hosts` (indices), started `age` seconds before now.
  void job(std::uint64_t id, const std::vector<int>& hosts, double age = 1000) {
    SlurmJob j;
    j.job_id = id;
    j.name = "train";
    j.user = "alice";
    j.partition = "gpu";
    j.start_time = static_cast<std::int64_t>(now - age);
    JobPorts ports;
    ports.job_id = id;
    for (const int h : hosts) {
      j.hosts.push_back("gpu0" + std::to_string(h));
      ports.ports.push_back(hca(h));
    }
    for (const int h : hosts) ports.ports.push_back(leaf_into(h));
    jobs.push_back(j);
    join.jobs.push_back(ports);
  }

  void stall(std::size_t port, double w, std::size_t root = kNoPort) {
    analysis.result.ports[port].stall = w;
    analysis.result.congestion.root[port] = root;
  }
  // An exported root at `port`, fed by `senders` (analysed port, bytes/s).
  void root(std::size_t port, const std::vector<std::pair<std::size_t, double>>& senders = {},
            bool known = true) {
    analysis.result.congestion.root[port] = port;
    analysis.result.congestion.roots.push_back(CongestionRoot{port});
    if (!known) return;
    RootSenders s;
    s.root = analysis.result.congestion.roots.size() - 1;
    for (const auto& [p, bytes] : senders) s.top.push_back(RootSender{{}, p, bytes});
    routes.senders.push_back(s);
  }

  // The next sweep's inputs: no stall, no root, no job (set them again).
  void next(double seconds = kInterval) {
    now += seconds;
    reset();
  }
  void reset() {
    for (PortScore& s : analysis.result.ports) s.stall = 0;
    for (PortSample& s : analysis.samples) s.xmit_data_words = 0;
    analysis.result.congestion.root.assign(analysis.result.ports.size(), kNoPort);
    analysis.result.congestion.roots.clear();
    routes.senders.clear();
    jobs.clear();
    ended.clear();
    join.jobs.clear();
    links.links.clear();
  }
};

void check_adds_up(const JobReceipt& r) {
  INFO("job " << r.job_id);
  CHECK(r.self_stall_seconds + r.other_jobs_stall_seconds + r.unattributed_stall_seconds +
            r.outside_trees_stall_seconds ==
        Approx(r.stall_seconds));
  double culprits = 0;
  for (const ReceiptCulprit& c : r.culprits) culprits += c.stall_seconds;
  CHECK(culprits <= r.other_jobs_stall_seconds + 1e-9);
}

// The link of host 0's HCA (`a` the leaf's port into it) as the link
// tracker reports it.
LinkReport host0_link(LinkCondition condition, std::uint32_t downs) {
  LinkReport link;
  link.a = LinkEnd{0x1000, 1, 0, 0};
  link.b = LinkEnd{0x1001, 1, 1, 0};
  link.condition = condition;
  link.downs_last_hour = downs;
  return link;
}

const JobReceipt* receipt_of(const std::vector<JobReceipt>& rs, std::uint64_t id) {
  for (const JobReceipt& r : rs) {
    if (r.job_id == id) return &r;
  }
  return nullptr;
}

// Two leaves under one spine, three hosts "gpu1<k> mlx5_0" on each (hosts
// 0-2 on leaf 0, 3-5 on leaf 1); every port of every node analysed, with
// its tier and direction as the topology gives them.
class UplinkSweeps : public ReceiptSweepParts {
 public:
  UplinkSweeps() {
    test::FabricBuilder b;
    leaf_[0] = b.add_switch("leaf0");
    leaf_[1] = b.add_switch("leaf1");
    const int spine = b.add_switch("spine0");
    b.link(leaf_[0], spine);
    b.link(leaf_[1], spine);
    for (int k = 0; k < 6; ++k) {
      host_[k] = b.add_hca("gpu1" + std::to_string(k) + " mlx5_0");
      b.link(leaf_[k / 3], host_[k]);
    }
    fabric = std::make_shared<const Fabric>(b.build());
    for (std::size_t n = 0; n < fabric->nodes.size(); ++n) {
      const auto node = static_cast<int>(n);
      for (std::uint32_t i = 0; i < fabric->nodes[n].ports.size(); ++i) {
        const bool leaf = node == leaf_[0] || node == leaf_[1];
        const bool hca = fabric->nodes[n].type == NodeType::kHca;
        // Each leaf's port 1 is its cable to the spine.
        add_receipt_port(analysis, node, i,
                         hca    ? Tier::kHca
                         : leaf ? Tier::kLeaf
                                : Tier::kSpine,
                         hca              ? PortDirection::kHost
                         : leaf && i == 0 ? PortDirection::kUp
                                          : PortDirection::kDown);
      }
    }
    analysis.result.congestion.root.assign(analysis.result.ports.size(), kNoPort);
  }

  // The analysed port of host `k`'s HCA, and of leaf `l`'s up port.
  std::size_t hca(int k) const { return analysed(host_[k], 0); }
  std::size_t up(int l) const { return analysed(leaf_[l], 0); }

  void job(std::uint64_t id, const std::vector<int>& hosts) {
    SlurmJob j;
    j.job_id = id;
    j.start_time = static_cast<std::int64_t>(now - 1000);
    JobPorts ports;
    ports.job_id = id;
    for (const int h : hosts) {
      j.hosts.push_back("gpu1" + std::to_string(h));
      ports.ports.push_back(hca(h));
    }
    jobs.push_back(j);
    join.jobs.push_back(ports);
  }
  // The forwarding tables of a min-hop subnet manager, or none.
  void routes_known(bool known) {
    routes.model =
        known ? RouteModel::build(
                    fabric, std::make_shared<const RouteTables>(test::min_hop_tables(*fabric)))
              : nullptr;
  }

  // The next sweep: no bytes, no job (set them again).
  void next() {
    now += kInterval;
    for (PortSample& s : analysis.samples) s.xmit_data_words = 0;
    jobs.clear();
    join.jobs.clear();
  }

 private:
  std::size_t analysed(int node, std::uint32_t port_index) const {
    for (std::size_t p = 0; p < analysis.result.ports.size(); ++p) {
      const PortScore& s = analysis.result.ports[p];
      if (s.node == node && s.port_index == port_index) return p;
    }
    return kNoPort;
  }

  int leaf_[2] = {};
  int host_[6] = {};
};

}  // namespace

TEST_CASE("Receipt tracker: the stall split names self, other jobs, no sender and no tree",
          "[receipts]") {
  Sweeps s(5);
  // Two sweeps alike: job 11 on hosts 0, 1; job 22 on hosts 2, 3.
  for (int i = 0; i < 2; ++i) {
    s.job(11, {0, 1});
    s.job(22, {2, 3});
    // Host 2 (job 22) stalls at 0.5 in an incast tree rooted at the leaf
    // port into it, fed 3:1:1 by host 0 (job 11), host 3 (job 22 itself)
    // and a port on no job (host 4).
    s.root(Sweeps::leaf_into(2),
           {{Sweeps::hca(0), 300}, {Sweeps::hca(3), 100}, {Sweeps::hca(4), 100}});
    s.stall(Sweeps::hca(2), 0.5, Sweeps::leaf_into(2));
    // Host 3 stalls at 0.2 outside any exported tree.
    s.stall(Sweeps::hca(3), 0.2);
    // Host 0 (job 11) stalls at 0.1 in a tree rooted at its own port.
    s.root(Sweeps::hca(0));
    s.stall(Sweeps::hca(0), 0.1, Sweeps::hca(0));
    s.sent(Sweeps::hca(0), 4000);
    s.sent(Sweeps::leaf_into(0), 1000);
    CHECK(s.sweep().empty());
    s.next();
  }
  JobReceipt running;
  REQUIRE(s.tracker.peek(22, s.now, running));
  CHECK(running.stall_seconds == Approx(2 * (5 + 2)));
  CHECK(s.tracker.stats().running == 2);

  // A newer list without them: both end at its poll.
  const auto done = s.sweep(true, s.now - 3);
  REQUIRE(done.size() == 2);
  const JobReceipt* b = receipt_of(done, 22);
  REQUIRE(b != nullptr);
  check_adds_up(*b);
  CHECK(b->end == s.now - 3);
  CHECK(b->end_known);
  CHECK(b->start == kTrackerT0 - 1000);
  CHECK(b->observed_seconds == 2 * kInterval);
  CHECK(b->missed_seconds == Approx(b->end - b->start - 2 * kInterval));
  CHECK(b->port_seconds == 4 * kInterval);
  CHECK(b->stall_seconds == Approx(14));
  CHECK(b->other_jobs_stall_seconds == Approx(6));
  CHECK(b->self_stall_seconds == Approx(2));
  CHECK(b->unattributed_stall_seconds == Approx(2));
  CHECK(b->outside_trees_stall_seconds == Approx(4));
  REQUIRE(b->culprits.size() == 1);
  CHECK(b->culprits[0].job_id == 11);
  CHECK(b->culprits[0].stall_seconds == Approx(6));
  CHECK(b->verdict == ReceiptVerdict::kOtherJobs);
  CHECK(b->line.find("in trees fed by job 11") != std::string::npos);
  CHECK(b->worst_port.host == "gpu02");
  CHECK(b->worst_port.device == "mlx5_0");
  CHECK(b->worst_port.stall_ratio == Approx(0.5));
  CHECK(b->worst_minute_ratio == Approx(14.0 / 40));
  CHECK(b->cross_spine_basis == CrossSpineBasis::kUnknown);
  CHECK(b->cross_spine_share < 0);

  const JobReceipt* a = receipt_of(done, 11);
  REQUIRE(a != nullptr);
  check_adds_up(*a);
  CHECK(a->self_stall_seconds == Approx(2));
  CHECK(a->verdict == ReceiptVerdict::kSelfInflicted);
  CHECK(a->bytes_sent == 8000);
  CHECK(a->bytes_received == 2000);
  REQUIRE(a->rails.size() == 1);
  CHECK(a->rails[0].bytes_sent == 8000);
  // Nothing tracked any more.
  s.next();
  CHECK(s.sweep().empty());
  CHECK_FALSE(s.tracker.peek(22, s.now, running));
}

TEST_CASE("Receipt tracker: a tree with no sender known is unattributed", "[receipts]") {
  Sweeps s(3);
  s.job(5, {0});
  s.root(Sweeps::leaf_into(0), {}, false);
  s.stall(Sweeps::hca(0), 0.4, Sweeps::leaf_into(0));
  s.sweep();
  s.next();
  const auto done = s.sweep(true);
  REQUIRE(done.size() == 1);
  check_adds_up(done[0]);
  CHECK(done[0].unattributed_stall_seconds == Approx(4));
  CHECK(done[0].verdict == ReceiptVerdict::kUnattributed);
}

TEST_CASE("Receipt tracker: jobs sharing hosts both get the ports' stall", "[receipts]") {
  Sweeps s(3);
  s.job(1, {0, 1});
  s.job(2, {0});
  // Host 0 stalls in a tree fed by host 0 itself (both jobs) and host 2
  // (no job) equally.
  s.root(Sweeps::leaf_into(1), {{Sweeps::hca(0), 100}, {Sweeps::hca(2), 100}});
  s.stall(Sweeps::hca(0), 0.6, Sweeps::leaf_into(1));
  s.sweep();
  s.next();
  const auto done = s.sweep(true);
  REQUIRE(done.size() == 2);
  for (const JobReceipt& r : done) {
    check_adds_up(r);
    CHECK(r.stall_seconds == Approx(6));
    CHECK(r.unattributed_stall_seconds == Approx(3));
    // Host 0's bytes are both jobs': half its own, half the other's.
    CHECK(r.self_stall_seconds == Approx(1.5));
    CHECK(r.other_jobs_stall_seconds == Approx(1.5));
    REQUIRE(r.culprits.size() == 1);
    CHECK(r.culprits[0].job_id == (r.job_id == 1 ? 2u : 1u));
  }
}

TEST_CASE("Receipt tracker: a job shorter than a sweep", "[receipts]") {
  Sweeps s(2);
  SECTION("never in a sweep: no receipt") {
    CHECK(s.sweep().empty());
    s.next();
    CHECK(s.sweep().empty());
    CHECK(s.tracker.stats().running == 0);
  }
  SECTION("in one sweep, started within its interval: a receipt with no data") {
    s.job(9, {0}, 4);
    s.stall(Sweeps::hca(0), 0.9);
    CHECK(s.sweep().empty());
    s.next();
    const auto done = s.sweep(true, s.now - 1);
    REQUIRE(done.size() == 1);
    CHECK(done[0].verdict == ReceiptVerdict::kNoData);
    CHECK(done[0].port_seconds == 0);
    CHECK(done[0].start == kTrackerT0 - 4);
    CHECK(done[0].end == s.now - 1);
    CHECK(done[0].line == "network: no data (no HCA port of the job was measured)");
  }
}

TEST_CASE("Receipt tracker: a job source down while jobs end loses none and invents none",
          "[receipts]") {
  ReceiptsConfig config;
  config.unknown_end_after = 10min;
  Sweeps s(2, config);
  s.job(7, {0});
  s.job(8, {1});
  s.sweep();
  const double last_poll = s.now;
  s.next();
  s.job(7, {0});
  s.job(8, {1});
  s.sweep();
  const double last_seen = s.now;
  // The source goes down: the same (old) list for a while, then none.
  s.next();
  s.job(7, {0});
  s.job(8, {1});
  CHECK(s.sweep(true, last_poll + kInterval).empty());
  for (int i = 0; i < 10; ++i) {
    s.next(30);
    CHECK(s.sweep(false).empty());
  }
  SECTION("back within unknown_end_after without job 8: it ended at that poll") {
    s.next();
    s.job(7, {0});
    const auto done = s.sweep();
    REQUIRE(done.size() == 1);
    CHECK(done[0].job_id == 8);
    CHECK(done[0].end_known);
    CHECK(done[0].end == s.now);
    // The sweep that joined the old list measured it too.
    CHECK(done[0].observed_seconds == 3 * kInterval);
    CHECK(done[0].missed_seconds > 300);
    CHECK(done[0].line.find("not observed") != std::string::npos);
  }
  SECTION("down longer than unknown_end_after: receipts that say the end is not known") {
    s.next(10 * 60);
    const auto done = s.sweep(false);
    REQUIRE(done.size() == 2);
    for (const JobReceipt& r : done) {
      CHECK_FALSE(r.end_known);
      CHECK(r.end == last_seen + kInterval);
      CHECK(r.line.find("end not known") != std::string::npos);
    }
    s.next();
    CHECK(s.sweep(false).empty());
    CHECK(s.tracker.stats().running == 0);
  }
}

// Slurm lists an ended job for MinJobAge with its end_time: the receipt
// ends there, not at the poll that found it gone; an end after that poll
// (another host's clock) is the poll.
TEST_CASE("Receipt tracker: the end is Slurm's end_time when the list shows the job ended",
          "[receipts]") {
  Sweeps s(2);
  // Started an interval and a half before the first sweep: half an
  // interval not observed.
  s.job(4, {0}, 1.5 * kInterval);
  s.job(6, {1});
  s.sweep();
  // Polled 5 s before this sweep, still running; it ends 1 s after that
  // poll: the interval up to this sweep is counted, past its end.
  s.next();
  s.job(4, {0}, 2.5 * kInterval);
  s.job(6, {1});
  s.sweep(true, s.now - 5);
  s.next();
  s.job(6, {1});
  s.ended = {{4, static_cast<std::int64_t>(kTrackerT0 + 6)}};
  const auto done = s.sweep();
  REQUIRE(done.size() == 1);
  CHECK(done[0].job_id == 4);
  CHECK(done[0].end_known);
  CHECK(done[0].start == kTrackerT0 - 1.5 * kInterval);
  CHECK(done[0].end == kTrackerT0 + 6);
  // Two intervals, the 4 s past its end not of its run: the part before
  // the first interval is still missed.
  CHECK(done[0].observed_seconds == 16);
  CHECK(done[0].missed_seconds == 0.5 * kInterval);
  CHECK(done[0].port_seconds == 2 * kInterval);

  // An end a little after the poll (the fetch took a moment) is Slurm's;
  // minutes ahead, or before the start, is no end: the poll's time.
  s.next();
  s.job(6, {1});
  s.job(7, {0});
  s.job(8, {0});
  CHECK(s.sweep().empty());
  s.next();
  s.ended = {{6, static_cast<std::int64_t>(s.now + 1)},
             {7, static_cast<std::int64_t>(s.now + 100)},
             {8, static_cast<std::int64_t>(kTrackerT0 - 5000)}};
  const auto last = s.sweep(true, s.now - 2);
  REQUIRE(last.size() == 3);
  for (const JobReceipt& r : last) {
    INFO("job " << r.job_id);
    CHECK(r.end == (r.job_id == 6 ? s.now + 1 : s.now - 2));
  }
}

TEST_CASE("Receipt tracker: save and restore, the gap counted as missed", "[receipts]") {
  Sweeps s(3);
  for (int i = 0; i < 2; ++i) {
    s.job(3, {0, 1});
    s.root(Sweeps::leaf_into(0), {{Sweeps::hca(2), 100}, {Sweeps::hca(1), 100}});
    s.stall(Sweeps::hca(0), 0.3, Sweeps::leaf_into(0));
    s.sent(Sweeps::hca(1), 400);
    s.sweep();
    s.next();
  }
  const std::string saved = s.tracker.save(s.now);
  JobReceipt before;
  REQUIRE(s.tracker.peek(3, s.now, before));

  // A new daemon, 100 s later, restores it and sees one more sweep.
  ReceiptTracker restored;
  std::string error;
  REQUIRE(restored.restore(saved, error));
  CHECK(error.empty());
  JobReceipt after;
  REQUIRE(restored.peek(3, s.now, after));
  CHECK(after.stall_seconds == before.stall_seconds);
  CHECK(after.self_stall_seconds == before.self_stall_seconds);
  CHECK(after.unattributed_stall_seconds == before.unattributed_stall_seconds);
  CHECK(after.bytes_sent == before.bytes_sent);
  CHECK(after.worst_port.host == before.worst_port.host);
  CHECK(after.worst_minute == before.worst_minute);

  s.tracker = std::move(restored);
  s.next(100);
  s.job(3, {0, 1});
  s.sweep();
  s.next();
  const auto done = s.sweep();
  REQUIRE(done.size() == 1);
  const JobReceipt& r = done[0];
  check_adds_up(r);
  CHECK(r.observed_seconds == 3 * kInterval);
  CHECK(r.missed_seconds == Approx(r.end - r.start - 3 * kInterval));
  CHECK(r.self_stall_seconds == Approx(3));
  CHECK(r.unattributed_stall_seconds == Approx(3));
  CHECK(r.bytes_sent == 800);

  ReceiptTracker other;
  CHECK_FALSE(other.restore("{\"version\": 99, \"jobs\": []}", error));
  CHECK_FALSE(error.empty());
  CHECK_FALSE(other.restore("not json", error));
  CHECK_FALSE(other.restore(R"({"version": 1, "last_polled": 0, "jobs": [{"x": 1}]})", error));
  CHECK(other.stats().running == 0);
}

// A daemon down longer than receipts.unknown_end_after: its first sweeps
// after the restart may run before the job source's first poll (the poll
// is on its own thread). The outage clock starts at the restart, not at
// the last poll before it: the daemon could not poll while it was down,
// and the restored jobs must not be finished as "end not known" (then
// started again by the first list: two receipts for one job).
TEST_CASE("Receipt tracker: a restart longer than unknown_end_after finishes no job unasked",
          "[receipts]") {
  ReceiptsConfig config;
  config.unknown_end_after = 10min;
  Sweeps s(2, config);
  for (int i = 0; i < 2; ++i) {
    s.job(5, {0, 1});
    s.sweep();
    s.next();
  }
  ReceiptTracker restored(config);
  std::string error;
  REQUIRE(restored.restore(s.tracker.save(s.now - kInterval), error));
  s.tracker = std::move(restored);

  // Back an hour later; two sweeps before the first poll.
  s.next(60 * 60);
  CHECK(s.sweep(false).empty());
  s.next();
  CHECK(s.sweep(false).empty());
  CHECK(s.tracker.stats().running == 1);
  SECTION("the first list holds the job: one receipt, when it ends, for its whole life") {
    s.next();
    s.job(5, {0, 1});
    CHECK(s.sweep().empty());
    s.next();
    const auto done = s.sweep();
    REQUIRE(done.size() == 1);
    CHECK(done[0].job_id == 5);
    CHECK(done[0].end_known);
    CHECK(done[0].start == kTrackerT0 - 1000);
    CHECK(done[0].observed_seconds == 3 * kInterval);
    CHECK(done[0].missed_seconds == Approx(done[0].end - done[0].start - 3 * kInterval));
    CHECK(done[0].line.find("not observed") != std::string::npos);
  }
  SECTION("no list for unknown_end_after since the restart: the end is not known") {
    s.next(10 * 60);
    const auto done = s.sweep(false);
    REQUIRE(done.size() == 1);
    CHECK_FALSE(done[0].end_known);
  }
}

TEST_CASE("Receipt tracker: a link condition on a job's cable is recorded with its times",
          "[receipts]") {
  Sweeps s(2);
  for (std::uint32_t downs = 1; downs <= 2; ++downs) {
    s.job(4, {0, 1}, kInterval);
    s.links.links.push_back(host0_link(LinkCondition::kFlapping, downs));
    s.sweep();
    s.next();
  }
  const double last = s.now - kInterval;
  const auto done = s.sweep();
  REQUIRE(done.size() == 1);
  const JobReceipt& r = done[0];
  REQUIRE(r.links.size() == 1);
  CHECK(r.links[0].condition == LinkCondition::kFlapping);
  CHECK(r.links[0].downs == 2);
  CHECK(r.links[0].first_seen == kTrackerT0);
  CHECK(r.links[0].last_seen == last);
  CHECK(r.links[0].port.host == "gpu00");
  CHECK(r.links[0].port.device == "mlx5_0");
  CHECK(r.verdict == ReceiptVerdict::kLinkFault);
  // (Then the share of its run not observed: the interval it ended in.)
  CHECK(r.line.rfind("network: 0.0 % of port-time stalled; mlx5_0 on gpu00 flapped twice", 0) == 0);
}

TEST_CASE("Receipt tracker: a cable seen down between its flaps flapped", "[receipts]") {
  // As the link tracker reports a cable that goes down, comes back, goes
  // down again: down (1), flapping (2 downs, up again), down (3).
  const LinkCondition seen[] = {LinkCondition::kDown, LinkCondition::kFlapping,
                                LinkCondition::kDown};
  Sweeps s(2);
  for (std::uint32_t downs = 1; downs <= 3; ++downs) {
    s.job(4, {0, 1}, kInterval);
    s.links.links.push_back(host0_link(seen[downs - 1], downs));
    s.sweep();
    s.next();
  }
  const auto done = s.sweep();
  REQUIRE(done.size() == 1);
  const JobReceipt& r = done[0];
  REQUIRE(r.links.size() == 1);
  CHECK(r.links[0].condition == LinkCondition::kFlapping);
  CHECK(r.links[0].downs == 3);
  CHECK(r.line.rfind("network: 0.0 % of port-time stalled; mlx5_0 on gpu00 flapped 3 times", 0) ==
        0);

  // Down once and back: it went down, it did not flap.
  Sweeps once(2);
  for (const LinkCondition c : {LinkCondition::kDown, LinkCondition::kNone}) {
    once.job(5, {0, 1}, kInterval);
    if (c != LinkCondition::kNone) once.links.links.push_back(host0_link(c, 1));
    once.sweep();
    once.next();
  }
  const auto ended = once.sweep();
  REQUIRE(ended.size() == 1);
  REQUIRE(ended[0].links.size() == 1);
  CHECK(ended[0].links[0].condition == LinkCondition::kDown);
  CHECK(ended[0].line.find("mlx5_0 on gpu00 went down once") != std::string::npos);
}

TEST_CASE("Receipt tracker: a job alone on its leaf gets the uplinks share", "[receipts]") {
  UplinkSweeps s;
  // Job 7 on hosts 0 and 1 (leaf 0); host 2 on no job sends a few bytes
  // (under 1 % of the job's, tolerated). The leaf sends half the job's
  // bytes up to the spine. No route model.
  for (int i = 0; i < 2; ++i) {
    s.job(7, {0, 1});
    s.sent(s.hca(0), 3000);
    s.sent(s.hca(1), 1000);
    s.sent(s.hca(2), 20);
    s.sent(s.up(0), 2000);
    CHECK(s.sweep().empty());
    s.next();
  }
  JobReceipt running;
  REQUIRE(s.tracker.peek(7, s.now, running));
  CHECK(running.cross_spine_basis == CrossSpineBasis::kUplinks);
  CHECK(running.cross_spine_share == Approx(0.5));

  // A saved receipt keeps its uplinks sums.
  std::string error;
  ReceiptTracker restored;
  REQUIRE(restored.restore(s.tracker.save(s.now), error));
  REQUIRE(restored.peek(7, s.now, running));
  CHECK(running.cross_spine_basis == CrossSpineBasis::kUplinks);
  CHECK(running.cross_spine_share == Approx(0.5));

  const auto done = s.sweep();
  const JobReceipt* r = receipt_of(done, 7);
  REQUIRE(r != nullptr);
  CHECK(r->bytes_sent == 8000);
  CHECK(r->cross_spine_basis == CrossSpineBasis::kUplinks);
  CHECK(r->cross_spine_share == Approx(0.5));
}

TEST_CASE("Receipt tracker: a leaf shared with another busy port gives no uplinks share",
          "[receipts]") {
  UplinkSweeps s;
  const auto check_unknown = [&](const std::vector<std::uint64_t>& ids) {
    s.next();
    const auto done = s.sweep();
    REQUIRE(done.size() == ids.size());
    for (const std::uint64_t id : ids) {
      INFO("job " << id);
      const JobReceipt* r = receipt_of(done, id);
      REQUIRE(r != nullptr);
      CHECK(r->bytes_sent == 4000);
      CHECK(r->cross_spine_basis == CrossSpineBasis::kUnknown);
      CHECK(r->cross_spine_share < 0);
    }
  };
  // Leaf 0: job 7 on host 0, job 8 on host 1, both busy. Leaf 1: job 9 on
  // host 3, and host 4 on no job as busy.
  s.job(7, {0});
  s.job(8, {1});
  s.job(9, {3});
  for (const int h : {0, 1, 3, 4}) s.sent(s.hca(h), 4000);
  s.sent(s.up(0), 4000);
  s.sent(s.up(1), 4000);
  CHECK(s.sweep().empty());
  check_unknown({7, 8, 9});

  // Jobs 10 and 11 share host 3, alone on leaf 1: its bytes cannot be told
  // apart, neither job has the leaf alone.
  s.next();
  s.job(10, {3});
  s.job(11, {3});
  s.sent(s.hca(3), 4000);
  s.sent(s.up(1), 2000);
  CHECK(s.sweep().empty());
  check_unknown({10, 11});
}

TEST_CASE("Receipt tracker: routes win over uplinks", "[receipts]") {
  UplinkSweeps s;
  // Job 7 on host 0 (leaf 0) and host 3 (leaf 1), alone on both leaves.
  // The route model traces both its pairs across the spine; the leaves'
  // up ports sent nothing (uplinks alone would say 0).
  s.routes_known(true);
  s.job(7, {0, 3});
  s.sent(s.hca(0), 1000);
  s.sent(s.hca(3), 1000);
  CHECK(s.sweep().empty());
  s.next();
  // A sweep while the model is rebuilt: uplinks there, but routes were
  // counted, so the receipt stays on routes.
  s.routes_known(false);
  s.job(7, {0, 3});
  s.sent(s.hca(0), 1000);
  s.sent(s.hca(3), 1000);
  CHECK(s.sweep().empty());
  s.next();
  const auto done = s.sweep();
  const JobReceipt* r = receipt_of(done, 7);
  REQUIRE(r != nullptr);
  CHECK(r->cross_spine_basis == CrossSpineBasis::kRoutes);
  CHECK(r->cross_spine_share == Approx(1));
}

TEST_CASE("Receipt verdict: the rule and a safe, short line", "[receipts]") {
  const ReceiptsConfig config;
  JobReceipt r;
  judge_receipt(r, config);
  CHECK(r.verdict == ReceiptVerdict::kNoData);
  r.port_seconds = 1000;
  r.stall_seconds = 5;
  r.outside_trees_stall_seconds = 5;
  judge_receipt(r, config);
  CHECK(r.verdict == ReceiptVerdict::kClean);
  CHECK(r.line == "network: clean");

  r.stall_seconds = 110;
  r.other_jobs_stall_seconds = 90;
  r.self_stall_seconds = 15;
  r.culprits = {{4711, 60}, {4712, 20}, {4713, 10}};
  ReceiptLinkIssue l;
  l.port.host = std::string("gpu\x1b[31m0413");
  l.port.device = "mlx5_3";
  l.condition = LinkCondition::kFlapping;
  l.downs = 2;
  r.links.push_back(l);
  judge_receipt(r, config);
  CHECK(r.verdict == ReceiptVerdict::kOtherJobs);
  CHECK(r.line ==
        "network: 11 % of port-time stalled, 9.0 % in trees fed by jobs 4711, 4712 and others; "
        "mlx5_3 on gpu??31m0413 flapped twice");
  // A culprit whose part alone would leave the receipt clean (under 1 % of
  // port-time: a host that moved next to nothing) is not named, nor is a
  // rest that small.
  r.culprits = {{4711, 85}, {4712, 4.5}, {4713, 0.5}};
  judge_receipt(r, config);
  CHECK(r.line.rfind("network: 11 % of port-time stalled, 9.0 % in trees fed by job 4711; ", 0) ==
        0);
  r.culprits = {{4711, 75}, {4712, 14}, {4713, 1e-8}};
  judge_receipt(r, config);
  CHECK(r.line.rfind("network: 11 % of port-time stalled, 9.0 % in trees fed by jobs 4711, 4712; ",
                     0) == 0);
  r.culprits = {{4711, 70}, {4712, 5}, {4713, 5}, {4714, 5}, {4715, 5}};
  judge_receipt(r, config);
  CHECK(r.line.rfind(
            "network: 11 % of port-time stalled, 9.0 % in trees fed by job 4711 and others; ", 0) ==
        0);

  r.self_stall_seconds = 95;
  judge_receipt(r, config);
  CHECK(r.verdict == ReceiptVerdict::kSelfInflicted);
  r.unattributed_stall_seconds = 200;
  judge_receipt(r, config);
  CHECK(r.verdict == ReceiptVerdict::kUnattributed);

  r.links.assign(30, l);
  r.links[0].port.device = std::string(300, 'x');
  r.end_known = false;
  r.start = 0;
  r.end = 100000;
  judge_receipt(r, config);
  CHECK(r.line.size() <= kReceiptLineMax);
  for (const char c : r.line) CHECK((c >= ' ' && c <= '~'));
}
