// The routes on a simulated fabric (ibsim + opensm), against the
// infiniband-diags oracles: /route equals ibtracert hop for hop, /routes'
// counts equal those computed from ibroute's dump of every switch; a
// leaf-spine cable going down is one re-route event and the paths follow
// it; a stale switch keeps its table; hostile and wrong queries get clear
// errors; opensm stays master throughout.
#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "daemon_fixture.h"
#include "test/support/config_yaml.h"

using namespace ibfx::test;
using nlohmann::json;

namespace {

struct Hop {
  std::string node;
  int in_port = 0;
  int out_port = 0;
  bool operator==(const Hop&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Hop& h) {
  return os << h.node << "[" << h.in_port << "->" << h.out_port << "]";
}

// ibtracert's path: "[out] -> switch port {guid}[in] lid ... \"name\"" per
// hop; the out port of a switch is the bracket of the next line.
std::vector<Hop> parse_ibtracert(const std::string& text, bool& reached) {
  static const std::regex line(
      R"re(^\[([0-9]+)\] -> (switch|ca) port \{0x[0-9a-fA-F]+\}\[([0-9]+)\].*"(.*)"\s*$)re");
  std::vector<Hop> hops;
  reached = false;
  std::istringstream in(text);
  std::string l;
  while (std::getline(in, l)) {
    std::smatch m;
    if (!std::regex_match(l, m, line)) {
      if (l.rfind("To ", 0) == 0) reached = true;
      continue;
    }
    if (!hops.empty()) hops.back().out_port = std::stoi(m[1]);
    if (m[2] == "switch") hops.push_back({m[4], std::stoi(m[3]), 0});
  }
  return hops;
}

std::vector<Hop> hops_of(const json& route) {
  std::vector<Hop> hops;
  for (const json& h : route["hops"]) {
    hops.push_back(
        {h["node_name"].get<std::string>(), h["in_port"].get<int>(), h["out_port"].get<int>()});
  }
  return hops;
}

std::string url(const std::string& text) {
  std::string out;
  for (const unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.') {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

HttpReply route(Daemon& d, const std::string& from, const std::string& to,
                const std::string& extra = "") {
  return http_get(d.port(), "/route?from=" + url(from) + "&to=" + url(to) + extra);
}

// Every switch of the fabric has its table read (/routes answers 200).
bool all_tables_read(Daemon& d, const Fabric& f) {
  for (const auto& n : f.nodes()) {
    if (!n.is_switch()) continue;
    if (http_get(d.port(), "/routes?node=" + url(n.name)).status != 200) return false;
  }
  return true;
}

std::vector<std::string> hca_names(const Fabric& f) {
  std::vector<std::string> names;
  for (const auto& n : f.nodes()) {
    if (!n.is_switch()) names.push_back(n.name);
  }
  return names;
}

// ibroute's "0x0005 003 : (Channel Adapter ...)": destination HCA LIDs per
// out port.
std::map<int, int> hca_destinations_per_port(const std::string& text) {
  static const std::regex line(R"(^0x([0-9a-fA-F]+) +([0-9]+) : \(Channel Adapter)");
  std::map<int, int> per_port;
  std::istringstream in(text);
  std::string l;
  while (std::getline(in, l)) {
    std::smatch m;
    if (std::regex_search(l, m, line)) ++per_port[std::stoi(m[2])];
  }
  return per_port;
}

const FatTreeSpec kSpec{.servers = 8, .rails = 2, .tiers = 2, .radix = 8};

}  // namespace

TEST_CASE("Routes: /route equals ibtracert and /routes counts equal ibroute's dumps",
          "[routes][integration]") {
  const Fabric f = make_fat_tree(kSpec);
  SimFabric sim(f);
  Daemon daemon(sim);
  REQUIRE(daemon.wait_ready());
  REQUIRE(eventually([&] { return all_tables_read(daemon, f); }, std::chrono::seconds(60)));
  const auto lids = sim.lids();
  const std::vector<std::string> hcas = hca_names(f);
  REQUIRE(hcas.size() >= 16);

  // Every ordered pair (16 HCAs: 240), at least 200.
  std::size_t compared = 0;
  std::size_t routed = 0;
  for (const std::string& from : hcas) {
    for (const std::string& to : hcas) {
      if (from == to) continue;
      INFO(from << " -> " << to);
      const RunResult oracle =
          sim.run({"ibtracert", std::to_string(lids.at(from)), std::to_string(lids.at(to))});
      bool reached = false;
      const std::vector<Hop> expected = parse_ibtracert(oracle.out, reached);
      const HttpReply r = route(daemon, from, to);
      INFO(r.body << oracle.out << oracle.err);
      if (oracle.ok() && reached) {
        REQUIRE(r.status == 200);
        const json j = json::parse(r.body);
        CHECK(hops_of(j) == expected);
        CHECK(j["from"]["lid"] == lids.at(from));
        CHECK(j["to"]["lid"] == lids.at(to));
        CHECK(j["routes_age_seconds"].get<double>() >= 0);
        ++routed;
      } else {
        // No path in the tables (another rail without a link between
        // them): an error that says so, never a path.
        CHECK(r.status >= 400);
        CHECK(json::parse(r.body).contains("error"));
      }
      ++compared;
    }
  }
  CHECK(compared >= 200);
  CHECK(routed > 0);

  // The text form names the same hops.
  const HttpReply text = route(daemon, hcas[0], hcas[5], "&format=text");
  CHECK(text.status < 500);
  CHECK(text.body.rfind("route ", 0) == 0);

  // /routes: per port, the HCA destinations equal ibroute's.
  for (const auto& n : f.nodes()) {
    if (!n.is_switch()) continue;
    INFO(n.name);
    const RunResult dump = sim.run({"ibroute", std::to_string(lids.at(n.name))});
    REQUIRE(dump.ok());
    const std::map<int, int> expected = hca_destinations_per_port(dump.out);
    const HttpReply r = http_get(daemon.port(), "/routes?node=" + url(n.name));
    REQUIRE(r.status == 200);
    const json j = json::parse(r.body);
    CHECK(j["stale"] == false);
    std::map<int, int> counted;
    for (const json& p : j["ports"]) {
      if (p["destinations"].get<int>() > 0) counted[p["port"].get<int>()] = p["destinations"];
    }
    CHECK(counted == expected);
  }
  // The balance of the leaves' uplinks is exported.
  const Series s = daemon.series();
  CHECK(count_family(s, "infiniband_switch_route_imbalance") > 0);
  CHECK(value(s, "infiniband_route_changes_total") == 0);
}

TEST_CASE(
    "Routes: bad queries get clear errors and hostile names are never reflected raw and a silent "
    "switch is stale",
    "[routes][integration]") {
  const Fabric f = make_fat_tree(small_fat_tree());
  SimFabric sim(f);
  // Every table re-read every 5 s: the silent switch is asked soon.
  Daemon daemon(
      sim, {"--config.file=" +
            ConfigYaml().set("routes.reread_interval", "5s").write(sim.dir() + "/exporter.yaml")});
  REQUIRE(daemon.wait_ready());
  REQUIRE(eventually([&] { return all_tables_read(daemon, f); }, std::chrono::seconds(60)));
  const std::vector<std::string> hcas = hca_names(f);
  const std::string hostile = "<script>alert(1)</script>\"\n\x01";
  HttpReply r = route(daemon, hostile, hcas[1]);
  CHECK(r.status == 404);
  // JSON-escaped: valid JSON, the control characters never raw.
  CHECK(json::parse(r.body)["error"] == "unknown_node");
  CHECK(r.body.find('\x01') == std::string::npos);
  CHECK(std::count(r.body.begin(), r.body.end(), '\n') == 1);
  r = route(daemon, hostile, hcas[1], "&format=text");
  CHECK(r.status == 404);
  // Plain text: printable ASCII only, one line.
  CHECK(r.body.find('\x01') == std::string::npos);
  CHECK(std::count(r.body.begin(), r.body.end(), '\n') == 1);
  // A GUID typo: not a GUID, not a name.
  r = route(daemon, "0x0002c9030000zz01", hcas[1]);
  CHECK(r.status == 404);
  // Missing parameters, a switch as source, a port number out of range.
  CHECK(http_get(daemon.port(), "/route?to=" + url(hcas[1])).status == 400);
  CHECK(route(daemon, "leaf-r0-01", hcas[1]).status == 400);
  CHECK(route(daemon, hcas[0], hcas[1], "&from_port=999").status == 400);
  CHECK(route(daemon, hcas[0], hcas[1], "&from_port=7").status == 404);
  CHECK(http_get(daemon.port(), "/route?from=a&to=b&format=xml").status == 400);
  // /routes of an HCA, of nothing.
  CHECK(http_get(daemon.port(), "/routes?node=" + url(hcas[0])).status == 400);
  CHECK(http_get(daemon.port(), "/routes").status == 400);
  // A switch as destination: the route ends at it.
  r = route(daemon, hcas[0], "leaf-r0-01");
  CHECK(r.status == 200);

  // A switch that stops answering keeps its last table, marked stale, and
  // a path through it says so instead of trusting it.
  const std::string silent = "leaf-r1-01";
  const auto* node = &f.nodes().front();
  for (const auto& n : f.nodes()) {
    if (n.name == silent) node = &n;
  }
  REQUIRE(node->name == silent);
  for (int p = 1; p <= node->num_ports(); ++p) {
    if (node->ports[static_cast<std::size_t>(p)].connected()) sim.error_rate(silent, p, 100);
  }
  REQUIRE(eventually(
      [&] {
        const HttpReply t = http_get(daemon.port(), "/routes?node=" + url(silent));
        return t.status == 200 && json::parse(t.body)["stale"] == true;
      },
      std::chrono::seconds(60)));
  const json kept = json::parse(http_get(daemon.port(), "/routes?node=" + url(silent)).body);
  std::size_t destinations = 0;
  for (const json& p : kept["ports"]) destinations += p["destinations"].get<std::size_t>();
  CHECK(destinations > 0);  // the last table, kept
  std::string behind;       // an HCA under the silent leaf
  for (const json& p : kept["ports"]) {
    if (p["remote_node_name"].is_string() &&
        p["remote_node_name"].get<std::string>().find("mlx5") != std::string::npos) {
      behind = p["remote_node_name"];
    }
  }
  REQUIRE(!behind.empty());
  // From an HCA of the same rail (its suffix, "mlx5_<rail>").
  const std::string rail = behind.substr(behind.rfind(' '));
  std::string source;
  for (const std::string& h : hcas) {
    if (h != behind && h.size() >= rail.size() &&
        h.compare(h.size() - rail.size(), rail.size(), rail) == 0) {
      source = h;
    }
  }
  REQUIRE(!source.empty());
  r = route(daemon, source, behind);
  CHECK(r.status == 409);
  CHECK(json::parse(r.body)["error"] == "stale_table");
  CHECK(json::parse(r.body)["error_at"]["node_name"] == silent);
  for (int p = 1; p <= node->num_ports(); ++p) {
    if (node->ports[static_cast<std::size_t>(p)].connected()) sim.error_rate(silent, p, 0);
  }
  CHECK(eventually(
      [&] {
        const HttpReply t = http_get(daemon.port(), "/routes?node=" + url(silent));
        return t.status == 200 && json::parse(t.body)["stale"] == false;
      },
      std::chrono::seconds(60)));
  // The subnet manager is still master, and unharmed (SimFabric's
  // teardown checks it is still running).
  const RunResult sm = sim.run({"sminfo"});
  INFO(sm.out << sm.err);
  CHECK(sm.out.find("MASTER") != std::string::npos);
}

TEST_CASE(
    "Routes: a leaf-spine cable goes down and opensm re-routes: one route event, paths follow",
    "[routes][integration]") {
  const Fabric f = make_fat_tree(kSpec);
  SimFabric sim(f);
  Daemon daemon(sim);
  REQUIRE(daemon.wait_ready());
  REQUIRE(eventually([&] { return all_tables_read(daemon, f); }, std::chrono::seconds(60)));
  // The first leaf's uplink that carries destinations.
  std::string leaf = "leaf-r0-01";
  json table = json::parse(http_get(daemon.port(), "/routes?node=" + url(leaf)).body);
  int up_port = 0;
  std::string spine;
  int spine_port = 0;
  for (const json& p : table["ports"]) {
    if (!p["remote_node_name"].is_string()) continue;
    const std::string far = p["remote_node_name"];
    if (far.rfind("spine", 0) == 0 && p["destinations"].get<int>() > 0) {
      up_port = p["port"];
      spine = far;
      spine_port = p["remote_port"];
      break;
    }
  }
  REQUIRE(up_port != 0);
  sim.unlink(leaf, up_port);
  // Both ends count the down (hardware does; ibsim's Unlink does not).
  sim.perf_set(leaf, up_port, "PortCounters.LinkDownedCounter", 1);
  sim.perf_set(spine, spine_port, "PortCounters.LinkDownedCounter", 1);
  // opensm's next sweep re-routes around it; the reader finds the change.
  REQUIRE(eventually(
      [&] {
        const json e = json::parse(http_get(daemon.port(), "/events").body);
        for (const json& ev : e["events"]) {
          if (ev["kind"] == "route") return true;
        }
        return false;
      },
      std::chrono::seconds(90)));
  // One event for the re-route, naming the port that lost its routes.
  REQUIRE(eventually(
      [&] {
        // A 503 while the model of the new discovery is built.
        const auto reply = http_get(daemon.port(), "/routes?node=" + url(leaf));
        if (reply.status != 200) return false;
        const json t = json::parse(reply.body);
        for (const json& p : t["ports"]) {
          if (p["port"] == up_port) return p["destinations"] == 0;
        }
        return false;
      },
      std::chrono::seconds(30)));
  const json events = json::parse(http_get(daemon.port(), "/events").body);
  std::size_t route_events = 0;
  for (const json& ev : events["events"]) {
    if (ev["kind"] != "route") continue;
    ++route_events;
    CHECK(ev["destinations_moved"].get<int>() > 0);
  }
  CHECK(route_events >= 1);
  CHECK(route_events <= 2);  // the SM may write the tables in two sweeps
  // No path crosses the down cable any more.
  const std::vector<std::string> hcas = hca_names(f);
  for (const std::string& to : hcas) {
    const HttpReply r = route(daemon, hcas[0], to);
    if (r.status != 200) continue;
    for (const Hop& h : hops_of(json::parse(r.body))) {
      CHECK_FALSE((h.node == leaf && h.out_port == up_port));
    }
  }
  CHECK(value(daemon.series(), "infiniband_route_changes_total") >= 1);
}
