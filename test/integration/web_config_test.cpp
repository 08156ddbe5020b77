// --web.config.file end to end: the daemon on a simulated fabric behind TLS
// and basic auth, driven with curl the way a Prometheus scrape would be.
#include <array>
#include <catch2/catch.hpp>
#include <cctype>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "daemon_fixture.h"
#include "prometheus_fixture.h"
#include "shell.h"

using namespace ibfx::test;

namespace {

// curl's HTTP status for a request (or "000" when there was no HTTP answer)
// and its exit code. --max-time: a server that hangs fails the test (28).
std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

Shell curl(const std::string& args) {
  return shell("curl -sS --max-time 10 -o /dev/null -w '%{http_code}' " + args + " 2>/dev/null");
}

// The subject of the certificate the server at 127.0.0.1:port presents,
// asked with a client certificate (the server requires one).
std::string served_subject(int port, const std::string& dir) {
  return shell("openssl s_client -connect 127.0.0.1:" + std::to_string(port) +
               " -servername localhost -CAfile '" + dir + "/ca.crt' -cert '" + dir +
               "/client.crt' -key '" + dir +
               "/client.key' </dev/null 2>/dev/null"
               " | openssl x509 -noout -subject 2>/dev/null")
      .out;
}

}  // namespace

TEST_CASE("Daemon serves /metrics over TLS with basic auth and curl as the scraper",
          "[daemon][integration][web_config]") {
  const FatTreeSpec spec = small_fat_tree();
  SimFabric sim(spec);
  const std::string dir = sim.dir();
  const std::string crt = dir + "/tls.crt";
  const std::string key = dir + "/tls.key";
  const Shell openssl = shell(
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 "
      "-subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 -keyout '" +
      key + "' -out '" + crt + "' 2>&1");
  INFO(openssl.out);
  REQUIRE(openssl.exit_code == 0);
  {
    std::ofstream web(dir + "/web.yml");
    web << "tls_server_config:\n"
           "  cert_file: tls.crt\n"  // relative to web.yml
           "  key_file: tls.key\n"
           "http_server_config:\n"
           "  headers:\n"
           "    Strict-Transport-Security: max-age=31536000\n"
           "basic_auth_users:\n"
           "  prometheus: "
        << bcrypt_hash("s3cret:with colon") << "\n";
  }

  Daemon daemon(sim, {"--web.config.file=" + dir + "/web.yml"});
  const std::string base =
      "--cacert '" + crt + "' https://localhost:" + std::to_string(daemon.port());
  const std::string good = " -u 'prometheus:s3cret:with colon'";

  // Ready (first sweep done) as seen through TLS and auth.
  REQUIRE(eventually([&] { return curl(base + "/-/ready" + good).out == "200"; },
                     std::chrono::seconds(60)));

  const Shell metrics = shell("curl -sS --max-time 10 -D - " + base + "/metrics" + good);
  REQUIRE(metrics.exit_code == 0);
  CHECK(metrics.out.find("HTTP/1.1 200") == 0);
  CHECK(lower(metrics.out).find("strict-transport-security: max-age=31536000") !=
        std::string::npos);
  CHECK(metrics.out.find("infiniband_port_transmit_wait_seconds_total{") != std::string::npos);

  // Wrong password, unknown user, no credentials: 401 with a challenge.
  CHECK(curl(base + "/metrics -u 'prometheus:wrong'").out == "401");
  CHECK(curl(base + "/metrics -u 'nobody:s3cret:with colon'").out == "401");
  const Shell none = shell("curl -sS --max-time 10 -D - -o /dev/null " + base + "/metrics");
  CHECK(none.exit_code == 0);
  CHECK(none.out.find("HTTP/1.1 401") == 0);
  CHECK(lower(none.out).find("www-authenticate: basic realm=\"ibfabric_exporter\"") !=
        std::string::npos);

  // The status page, its JSON and the switch view are behind the same TLS
  // and auth (issue #27): the same server, the same session code.
  for (const char* path : {"/", "/status.json", "/?node=spine-01"}) {
    INFO(path);
    CHECK(curl(base + "'" + path + "'").out == "401");
    CHECK(curl(base + "'" + path + "'" + good).out == "200");
  }

  // An untrusted certificate is refused by the client (the server really is TLS).
  CHECK(curl("https://localhost:" + std::to_string(daemon.port()) + "/metrics" + good).exit_code ==
        60);

  // Plain HTTP to the TLS port: the connection is closed promptly, no HTTP
  // answer, no hang (curl exit 28), and the daemon keeps serving.
  const auto start = std::chrono::steady_clock::now();
  const Shell plain = curl("http://127.0.0.1:" + std::to_string(daemon.port()) + "/metrics" + good);
  CHECK(plain.exit_code != 0);
  CHECK(plain.exit_code != 28);
  CHECK(plain.out == "000");
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  CHECK(daemon.process().running());
  CHECK(curl(base + "/metrics" + good).out == "200");
}

TEST_CASE("Daemon rejects a bad web config file at start-up and in --check-config",
          "[daemon][integration][web_config]") {
  const std::string dir = "/tmp/ibfx-webcfg-bad-" + std::to_string(::getpid());
  std::system(("mkdir -p " + dir).c_str());
  std::ofstream(dir + "/web.yml") << "basic_auth_users:\n  prometheus: plaintext\n";
  const Shell check = shell(std::string(IBFX_DAEMON_PATH) + " --web.config.file=" + dir +
                            "/web.yml --check-config 2>&1");
  CHECK(check.exit_code == 2);
  CHECK(check.out.find(dir + "/web.yml:2: basic_auth_users.prometheus: expected a bcrypt hash") !=
        std::string::npos);
  std::system(("rm -rf " + dir).c_str());
}

// docs/tls.md's worked example, end to end: a private CA signs the server's
// and Prometheus's certificates (the openssl commands of the page), the
// daemon requires the client certificate and basic auth, and Debian's
// Prometheus scrapes it with `scheme: https`, `tls_config` and
// `basic_auth.password_file` as the page says. A job with the wrong
// password is refused (up 0, 401). Then the server certificate is replaced
// in place and the daemon reloaded (SIGHUP): new connections get the new
// certificate and Prometheus keeps scraping, with no restart.
TEST_CASE("Prometheus scrapes the daemon over TLS with a client certificate and basic auth",
          "[daemon][integration][web_config][prometheus]") {
  const FatTreeSpec spec = small_fat_tree();
  SimFabric sim(spec);
  const std::string dir = sim.dir();
  const std::string in_dir = "cd '" + dir + "' && ";
  // The page's commands (EC keys rather than RSA: faster; the same flags).
  const Shell pki =
      shell(in_dir +
            "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2"
            " -subj '/CN=ibfx test CA' -keyout ca.key -out ca.crt 2>&1 &&"
            " for who in server:localhost client:prometheus rotated:localhost; do"
            "  name=${who%%:*}; cn=${who#*:};"
            "  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes"
            "   -subj \"/CN=$cn/O=$name\" -keyout $name.key -out $name.csr 2>&1 || exit 1;"
            "  if [ $name = client ]; then echo extendedKeyUsage=clientAuth >$name.ext;"
            "  else echo subjectAltName=DNS:localhost,IP:127.0.0.1 >$name.ext; fi;"
            "  openssl x509 -req -in $name.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2"
            "   -extfile $name.ext -out $name.crt 2>&1 || exit 1;"
            " done && cp server.crt tls.crt && cp server.key tls.key");
  INFO(pki.out);
  REQUIRE(pki.exit_code == 0);
  std::ofstream(dir + "/password") << "s3cret\n";
  {
    std::ofstream web(dir + "/web.yml");
    web << "tls_server_config:\n"
           "  cert_file: tls.crt\n"
           "  key_file: tls.key\n"
           "  client_auth_type: RequireAndVerifyClientCert\n"
           "  client_ca_file: ca.crt\n"
           "basic_auth_users:\n"
           "  prometheus: "
        << bcrypt_hash("s3cret") << "\n";
  }
  Daemon daemon(sim, {"--web.config.file=" + dir + "/web.yml"});
  const std::string target = "127.0.0.1:" + std::to_string(daemon.port());

  // Without the client certificate the handshake fails; with it, curl gets
  // the page's 200.
  const std::string url = " https://localhost:" + std::to_string(daemon.port()) + "/-/healthy";
  CHECK(curl("--cacert '" + dir + "/ca.crt' -u prometheus:s3cret" + url).out == "000");
  CHECK(curl("--cacert '" + dir + "/ca.crt' --cert '" + dir + "/client.crt' --key '" + dir +
             "/client.key' -u prometheus:s3cret" + url)
            .out == "200");

  const std::string tls =
      "    scheme: https\n"
      "    tls_config:\n"
      "      ca_file: " +
      dir +
      "/ca.crt\n"
      "      cert_file: " +
      dir +
      "/client.crt\n"
      "      key_file: " +
      dir +
      "/client.key\n"
      "      server_name: localhost\n";
  Prometheus prom(
      "global:\n  scrape_interval: 1s\n"
      "scrape_configs:\n"
      "  - job_name: infiniband\n" +
          tls +
          "    basic_auth:\n"
          "      username: prometheus\n"
          "      password_file: " +
          dir +
          "/password\n"
          "    static_configs:\n      - targets: ['" +
          target +
          "']\n"
          "  - job_name: wrong_password\n" +
          tls +
          "    basic_auth:\n"
          "      username: prometheus\n"
          "      password: wrong\n"
          "    static_configs:\n      - targets: ['" +
          target + "']\n",
      Prometheus::Mode::kServer);
  auto value = [&](const std::string& q) {
    const auto s = samples(prom.query(q));
    return s.size() == 1 ? s[0].value : NAN;
  };
  const bool scraped = eventually(
      [&] {
        return value("up{job=\"infiniband\"}") == 1 &&
               value("count(infiniband_port_state{job=\"infiniband\"})") > 0 &&
               value("up{job=\"wrong_password\"}") == 0;
      },
      std::chrono::seconds(60));
  INFO(prom.targets());
  REQUIRE(scraped);
  CHECK(prom.targets().find("401") != std::string::npos);

  // Rotation: the new certificate over the old files, then a reload.
  CHECK(served_subject(daemon.port(), dir).find("O = server") != std::string::npos);
  REQUIRE(shell(in_dir + "cp rotated.crt tls.crt && cp rotated.key tls.key").exit_code == 0);
  REQUIRE(::kill(daemon.process().pid(), SIGHUP) == 0);
  CHECK(eventually(
      [&] { return served_subject(daemon.port(), dir).find("O = rotated") != std::string::npos; }));
  const double before = value("max(timestamp(up{job=\"infiniband\"}))");
  CHECK(eventually(
      [&] {
        return value("up{job=\"infiniband\"}") == 1 &&
               value("max(timestamp(up{job=\"infiniband\"}))") > before + 2;
      },
      std::chrono::seconds(30)));
  CHECK(daemon.process().running());
}
