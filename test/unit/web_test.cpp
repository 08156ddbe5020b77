#include "daemon/web.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "daemon/gzip.h"
#include "fake_fabric.h"
#include "fake_pma.h"

using namespace ibfx;

namespace {
struct Reply {
  int status = 0;
  std::string text;
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
  return {res.status, res.precompressed_gzip ? gunzip(body) : body};
}
}  // namespace

TEST_CASE("handle_web serves collect[] groups, node slices, 400s and /top", "[web]") {
  const Fabric fabric = ibfx::test::star_fabric(2);
  auto pma = std::make_unique<ibfx::test::FakePma>();
  for (const FabricNode& n : fabric.nodes) pma->nodes[n.lid];
  Config config;
  config.mad.timeout = std::chrono::milliseconds(10);
  config.mad.retries = 0;
  Exporter exporter(config, {}, std::move(pma), [&] {
    return DiscoveryResult{std::make_shared<const Fabric>(fabric), {}};
  });
  REQUIRE(exporter.discover_now());
  REQUIRE(exporter.sweep_now());
  const auto snap = exporter.snapshot();

  for (const bool gzip : {true, false}) {
    INFO("gzip " << gzip);
    const Reply full = get(exporter, "/metrics", gzip);
    CHECK(full.text == snap->text());
    // Groups, in the order asked or not: always in exposition order.
    std::string ports, aggregates;
    snap->render_group(RenderGroup::kPorts, [&](std::string_view p) { ports += p; });
    snap->render_group(RenderGroup::kAggregates, [&](std::string_view p) { aggregates += p; });
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
