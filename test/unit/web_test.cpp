#include "daemon/web.h"

#include <unistd.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "exposition/gzip.h"
#include "http/http_server.h"
#include "test/support/fake_fabric.h"
#include "test/support/fake_pma.h"
#include "test/support/json_schema.h"
#include "test/support/snapshot_support.h"

using namespace ibfx;

namespace {
struct Reply {
  int status = 0;
  std::string text;
  std::string raw;  // the body as sent
  bool gzip = false;
};

Reply get(const Exporter& exporter, const std::string& target, bool gzip) {
  HttpRequest req;
  req.method = "GET";
  req.target = target;
  req.path = target.substr(0, target.find('?'));
  req.accepts_gzip = gzip;
  HttpResponse res = handle_web(exporter, req);
  std::string body = res.body;
  if (res.stream) {
    std::string piece;
    bool more = true;
    while (more) {
      more = res.stream->next(piece);
      body += piece;
    }
    CHECK(body.size() == res.stream->size);
  }
  const bool gz = res.precompressed_gzip;
  return {res.status, gz ? test::gunzip(body) : body, body, gz};
}

// An exporter over `fabric` whose PMAs answer at once, discovered and swept once.
std::unique_ptr<Exporter> fake_exporter(Fabric fabric) {
  auto pma = std::make_unique<ibfx::test::FakePma>();
  for (const FabricNode& n : fabric.nodes) pma->nodes[n.lid];
  Config config;
  config.mad.timeout = std::chrono::milliseconds(10);
  config.mad.retries = 0;
  auto shared = std::make_shared<const Fabric>(std::move(fabric));
  auto exporter = std::make_unique<Exporter>(config, NodeNameMap{}, std::move(pma), [shared] {
    return DiscoveryResult{shared, {}};
  });
  REQUIRE(exporter->discover_now());
  REQUIRE(exporter->sweep_now());
  return exporter;
}

bool promtool_clean(const std::string& text) {
  const std::string path = "/tmp/ibfx_web_" + std::to_string(::getpid()) + ".prom";
  std::ofstream(path) << text;
  const int rc = std::system(("promtool check metrics < " + path + " >/dev/null 2>&1").c_str());
  std::remove(path.c_str());
  return rc == 0;
}
}  // namespace

TEST_CASE("handle_web serves collect[] groups, node slices, 400s and /top", "[web]") {
  const auto exporter_ptr = fake_exporter(ibfx::test::star_fabric(2));
  const Exporter& exporter = *exporter_ptr;
  const auto snap = exporter.snapshot();

  for (const bool gzip : {true, false}) {
    INFO("gzip " << gzip);
    const Reply full = get(exporter, "/metrics", gzip);
    CHECK(full.text == exposition_text(*snap));
    // Groups, in the order asked or not: always in exposition order.
    std::string ports, aggregates;
    render_group(*snap, RenderGroup::kPorts, [&](std::string_view p) { ports += p; });
    render_group(*snap, RenderGroup::kAggregates, [&](std::string_view p) { aggregates += p; });
    CHECK(get(exporter, "/metrics?collect[]=aggregates", gzip).text == aggregates);
    CHECK(get(exporter, "/metrics?collect[]=aggregates&collect[]=ports", gzip).text ==
          ports + aggregates);
    const Reply bad = get(exporter, "/metrics?collect[]=bogus", gzip);
    CHECK(bad.status == 400);
    CHECK(bad.text.find("nodes, ports, aggregates") != std::string::npos);
  }
  // One node by name and by GUID (any spelling): its series only.
  const Reply by_name = get(exporter, "/metrics?node=gpu1%20mlx5_0", false);
  CHECK(by_name.status == 200);
  CHECK(by_name.text.find(R"(infiniband_port_state{node_guid="0x0000000000000201",port="1"})") !=
        std::string::npos);
  CHECK(by_name.text.find(R"({node_guid="0x0000000000000200")") == std::string::npos);
  CHECK(get(exporter, "/metrics?node=0x201", false).text == by_name.text);
  CHECK(get(exporter, "/metrics?node=201&collect[]=ports", false)
            .text.find("infiniband_node_info{") == std::string::npos);
  CHECK(get(exporter, "/metrics?node=nosuch", false).status == 400);

  const Reply top = get(exporter, "/top?n=3", false);
  CHECK(top.status == 200);
  CHECK(top.text.find("ROOTS OF CONGESTION") != std::string::npos);
  CHECK(top.text.find("NODES NOT ANSWERING") != std::string::npos);
  CHECK(get(exporter, "/top?n=0", false).status == 400);
  CHECK(get(exporter, "/top?n=x", false).status == 400);
}

TEST_CASE("Every collect[] selection is served from the publisher's render: one gzip member",
          "[web]") {
  const auto exporter_ptr = fake_exporter(ibfx::test::star_fabric(3));
  Exporter& exporter = *exporter_ptr;
  REQUIRE(exporter.sweep_now());  // a second sweep: the analysis' aggregates too
  const auto snap = exporter.snapshot();
  std::array<std::string, kRenderGroupCount> texts;
  for (std::size_t g = 0; g < kRenderGroupCount; ++g) {
    render_group(*snap, static_cast<RenderGroup>(g), [&](std::string_view p) { texts[g] += p; });
    REQUIRE_FALSE(texts[g].empty());
  }

  // The publisher rendered each group once when it published; from here on
  // a scrape, whatever it selects, serves the published runs themselves.
  const auto pub = exporter.publication();
  for (unsigned mask = 1; mask < (1u << kRenderGroupCount); ++mask) {
    std::string query, expected;
    std::uint64_t deflate_bytes = 0;
    GroupSelection selected{};
    for (std::size_t g = 0; g < kRenderGroupCount; ++g) {
      if (((mask >> g) & 1u) == 0) continue;
      selected[g] = true;
      query +=
          std::string(query.empty() ? "?" : "&") + "collect[]=" + std::string(kRenderGroupNames[g]);
      expected += texts[g];
      deflate_bytes += pub->exposition.group(static_cast<RenderGroup>(g)).deflate.bytes.size();
    }
    INFO(query);
    const Reply gz = get(exporter, "/metrics" + query, true);
    CHECK(gz.status == 200);
    CHECK(gz.gzip);  // several groups too, not only one or all
    CHECK(gz.text == expected);
    // One member: header + the groups' deflate runs + final block + trailer.
    CHECK(gz.raw.size() == 10 + deflate_bytes + 2 + 8);
    CHECK(gz.raw == test::gzip_member(pub->exposition.runs(selected)));
    const Reply plain = get(exporter, "/metrics" + query, false);
    CHECK_FALSE(plain.gzip);
    CHECK(plain.text == expected);
    CHECK(promtool_clean(plain.text));
  }
  // The full exposition is the same member with every group.
  const Reply full = get(exporter, "/metrics", true);
  CHECK(full.gzip);
  CHECK(full.raw ==
        get(exporter, "/metrics?collect[]=nodes&collect[]=ports&collect[]=aggregates", true).raw);
  CHECK(full.text == texts[0] + texts[1] + texts[2]);
  // A node slice reads the same runs.
  const Reply node = get(exporter, "/metrics?node=0x201", false);
  CHECK(node.status == 200);
  CHECK(node.text.find(R"(node_guid="0x0000000000000201")") != std::string::npos);
  CHECK(promtool_clean(node.text));

  // HEAD has the GET's Content-Length without a body being made.
  HttpRequest head;
  head.method = "HEAD";
  head.target = "/metrics?collect[]=ports&collect[]=aggregates";
  head.path = "/metrics";
  head.accepts_gzip = true;
  const HttpResponse h = handle_web(exporter, head);
  REQUIRE(h.stream);
  CHECK(h.precompressed_gzip);
  CHECK(h.stream->size == get(exporter, head.target, true).raw.size());
  // Scrapes publish nothing: the same publication is served throughout.
  CHECK(exporter.publication() == pub);
}

TEST_CASE("Several groups over HTTP: Content-Encoding gzip, Content-Length, one member", "[web]") {
  const auto exporter_ptr = fake_exporter(ibfx::test::star_fabric(3));
  const Exporter& exporter = *exporter_ptr;
  const auto snap = exporter.snapshot();
  boost::asio::io_context io;
  HttpServer server(io, "127.0.0.1:0",
                    [&exporter](const HttpRequest& req) { return handle_web(exporter, req); });
  std::thread thread([&io] { io.run(); });
  const std::string dir = "/tmp/ibfx_web_http_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port()) +
                          "/metrics?collect%5B%5D=nodes&collect%5B%5D=aggregates";
  // curl sends Accept-Encoding: gzip and writes the body as received.
  const int rc = std::system(("curl -sS --max-time 10 -H 'Accept-Encoding: gzip' -D " + dir +
                              "/headers -o " + dir + "/body.gz '" + url + "'")
                                 .c_str());
  server.stop();
  thread.join();
  REQUIRE(rc == 0);
  std::ifstream headers_file(dir + "/headers");
  std::string headers((std::istreambuf_iterator<char>(headers_file)), {});
  std::transform(headers.begin(), headers.end(), headers.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::ifstream body_file(dir + "/body.gz", std::ios::binary);
  const std::string body((std::istreambuf_iterator<char>(body_file)), {});
  INFO(headers);
  CHECK(headers.find("content-encoding: gzip\r\n") != std::string::npos);
  CHECK(headers.find("content-length: " + std::to_string(body.size()) + "\r\n") !=
        std::string::npos);
  const std::string expected = test::gunzip(test::gzip_of(*snap, {true, false, true}));
  CHECK(expected == test::gunzip(test::gzip_of(*snap, {true, false, false})) +
                        test::gunzip(test::gzip_of(*snap, {false, false, true})));
  CHECK(test::gunzip(body) == expected);
  // The system's gzip reads it too, to the same text.
  CHECK(std::system(("gzip -dc < " + dir + "/body.gz > " + dir + "/body.txt").c_str()) == 0);
  std::ifstream text_file(dir + "/body.txt", std::ios::binary);
  CHECK(std::string((std::istreambuf_iterator<char>(text_file)), {}) == expected);
  std::filesystem::remove_all(dir);
}

TEST_CASE("handle_web serves the status page, the switch view and status.json", "[web]") {
  const auto exporter_ptr = fake_exporter(ibfx::test::star_fabric(2));
  const Exporter& exporter = *exporter_ptr;
  const auto pub = exporter.publication();
  REQUIRE(pub);
  auto header = [](const HttpResponse& r, const std::string& name) {
    for (const auto& [n, v] : r.headers) {
      if (n == name) return v;
    }
    return std::string();
  };
  for (const bool gzip : {true, false}) {
    INFO("gzip " << gzip);
    // The page the publisher rendered, as it rendered it.
    const Reply page = get(exporter, "/", gzip);
    CHECK(page.status == 200);
    CHECK(page.gzip == gzip);
    CHECK(page.text == pub->status.html.identity);
    CHECK(page.text.find("<h2 id=\"heatmap\">Heatmap of pain</h2>") != std::string::npos);
    CHECK(page.text.find("href=\"/metrics\"") != std::string::npos);
    const Reply json = get(exporter, "/status.json", gzip);
    CHECK(json.status == 200);
    CHECK(json.text == pub->status.json.identity);
    CHECK(json.text.find("\"switches\":[") != std::string::npos);
  }
  HttpRequest req;
  req.method = "GET";
  req.target = req.path = "/";
  const HttpResponse r = handle_web(exporter, req);
  CHECK(r.content_type == "text/html; charset=utf-8");
  CHECK(header(r, "Content-Security-Policy").find("default-src 'none'") != std::string::npos);
  CHECK(header(r, "X-Content-Type-Options") == "nosniff");
  req.target = req.path = "/status.json";
  const HttpResponse j = handle_web(exporter, req);
  CHECK(j.content_type == "application/json");
  CHECK(header(j, "X-Content-Type-Options") == "nosniff");

  // The switch view, by name (URL-encoded) or GUID; an unknown name is a 404 page.
  const Reply node = get(exporter, "/?node=gpu1%20mlx5_0", false);
  CHECK(node.status == 200);
  CHECK(node.text.find("<h1>gpu1 mlx5_0</h1>") != std::string::npos);
  CHECK(get(exporter, "/?node=0x0000000000000201", false).text == node.text);
  const Reply unknown = get(exporter, "/?node=%3Cb%3E", false);
  CHECK(unknown.status == 404);
  CHECK(unknown.text.find("&lt;b&gt;") != std::string::npos);
  CHECK(get(exporter, "/?node=%zz", false).status == 400);
}

TEST_CASE("handle_web serves the history: ?at=, ?window=, /history.json, clear 404s", "[web]") {
  const auto exporter_ptr = fake_exporter(ibfx::test::star_fabric(2));
  Exporter& exporter = *exporter_ptr;
  REQUIRE(exporter.sweep_now());
  const auto pub = exporter.publication();
  REQUIRE(pub);
  REQUIRE(pub->history);
  REQUIRE(pub->history->frames.size() == 2);
  const double t = pub->history->frames.back()->time;
  const std::string at = std::to_string(static_cast<long long>(std::ceil(t)));
  // The live page carries the heatmap over time.
  CHECK(pub->status.html.identity.find("Heatmap of pain over time") != std::string::npos);

  const Reply page = get(exporter, "/?at=" + at, false);
  CHECK(page.status == 200);
  CHECK(page.text.find("id=\"as-of\"") != std::string::npos);
  CHECK(page.text.find("Heatmap of pain over time") != std::string::npos);
  const Reply json = get(exporter, "/status.json?at=" + at, false);
  CHECK(json.status == 200);
  const auto j = nlohmann::json::parse(json.text);
  CHECK(j["as_of"]["timestamp_seconds"] == t);
  CHECK(j["sweep"]["timestamp_seconds"] == t);
  CHECK(test::validates_against(json.text, IBFX_SOURCE_DIR "/docs/status.schema.json"));

  // Before the history: a 404 that says how far back it reaches.
  const Reply old = get(exporter, "/status.json?at=1000", false);
  CHECK(old.status == 404);
  CHECK(old.text.find("reaches back to") != std::string::npos);
  CHECK(get(exporter, "/?at=yesterday", false).status == 400);
  // After the last sweep: the newest sweep, said so (the page's newest
  // column may link to a second after it).
  const Reply later =
      get(exporter, "/?at=" + std::to_string(static_cast<long long>(t) + 3600), false);
  CHECK(later.status == 200);
  CHECK(later.text.find("the newest sweep: none is later (asked for ") != std::string::npos);
  CHECK(later.text.find("nearest before") == std::string::npos);
  // More than a day in the future: a 404 that names the newest sweep.
  const std::string future = std::to_string(static_cast<long long>(t) + 3 * 86400);
  for (const char* path : {"/?at=", "/status.json?at="}) {
    const Reply r = get(exporter, path + future, false);
    INFO(path << ": " << r.text);
    CHECK(r.status == 404);
    CHECK(r.text.find("at=" + future + " (") == 0);
    CHECK(r.text.find("is in the future: the status page history ends at the newest sweep") !=
          std::string::npos);
    CHECK(r.text.find("(" + std::to_string(static_cast<long long>(t)) + ")") != std::string::npos);
  }
  // Out of range (issue #45: it answered 200 "the sweep nearest before
  // -219246529-01-00"): a 400 that says what ?at= takes.
  for (const char* path : {"/?at=99999999999999999999", "/status.json?at=1e300"}) {
    const Reply r = get(exporter, path, false);
    INFO(path << ": " << r.text);
    CHECK(r.status == 400);
    CHECK(r.text.find("at must be Unix seconds (a number from 0 to 253402300799") == 0);
  }
  // A time in milliseconds: said so.
  const Reply ms = get(exporter, "/?at=" + std::to_string(static_cast<long long>(t) * 1000), false);
  CHECK(ms.status == 400);
  CHECK(ms.text.find("in milliseconds? As seconds that is at=" +
                     std::to_string(static_cast<long long>(t))) != std::string::npos);
  CHECK(get(exporter, "/?window=2h", false).status == 400);
  const Reply day = get(exporter, "/?window=24h", false);
  CHECK(day.status == 200);
  CHECK(day.text.find("Each column is 24m") != std::string::npos);
  const Reply minutes = get(exporter, "/?window=5m", false);
  CHECK(minutes.status == 200);
  CHECK(minutes.text.find("Each column is 5s") != std::string::npos);

  const Reply history = get(exporter, "/history.json", false);
  CHECK(history.status == 200);
  CHECK(nlohmann::json::parse(history.text)["frames"].size() == 2);
  CHECK(test::validates_against(history.text, IBFX_SOURCE_DIR "/docs/history.schema.json"));
  CHECK(get(exporter, "/history.json?from=10&to=5", false).status == 400);
  CHECK(get(exporter, "/history.json?step=-1", false).status == 400);

  // A job's page is its own: a job id that is not a number is a 400, one
  // the history never saw a 404, and status.json has no job page.
  CHECK(get(exporter, "/?job=12x", false).status == 400);
  const Reply unknown = get(exporter, "/?job=4711", false);
  CHECK(unknown.status == 404);
  CHECK(unknown.text.find("job 4711 is not in the status page history") == 0);
  const Reply json_job = get(exporter, "/status.json?job=4711", false);
  CHECK(json_job.status == 400);
  CHECK(json_job.text.find("/?job=ID") != std::string::npos);
}
