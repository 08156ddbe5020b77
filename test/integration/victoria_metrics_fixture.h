// VictoriaMetrics on loopback, from Debian's victoria-metrics package: the
// single-node store (victoria-metrics: the remote-write receiver and the
// Prometheus query API a cluster's vminsert and vmselect also speak),
// vmagent (scrapes and remote-writes) and vmalert (evaluates the rules
// against the store and writes the recorded series and alert states back).
// Each in its own temp dir, torn down by the destructor (loopback_service.h).
#pragma once

#include <fstream>
#include <string>
#include <vector>

#include "loopback_service.h"

namespace ibfx::test {

class VictoriaMetrics : public QueryService {
 public:
  VictoriaMetrics() : QueryService("victoria-metrics") {
    start({"/usr/bin/victoria-metrics", "-storageDataPath=" + dir() + "/data",
           "-httpListenAddr=127.0.0.1:{port}", "-loggerLevel=ERROR",
           // A sample is queryable as soon as it is written, not 30 s later
           // (the default keeps the last 30 s out of query results, for
           // samples still arriving), and no rollup cache hides a change
           // between two queries of the same expression.
           "-search.latencyOffset=0s", "-search.disableCache"},
          "/health");
  }
  std::string write_url() const {
    return "http://127.0.0.1:" + std::to_string(port()) + "/api/v1/write";
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port()); }
};

class VmAgent : public QueryService {
 public:
  // `scrape_config`: -promscrape.config's text. `extra`: more flags (the
  // -promscrape.cluster.* ones).
  VmAgent(const std::string& scrape_config, const std::string& remote_write_url,
          const std::vector<std::string>& extra = {})
      : QueryService("vmagent") {
    const std::string path = dir() + "/scrape.yml";
    std::ofstream(path) << scrape_config;
    std::vector<std::string> argv = {
        "/usr/bin/vmagent", "-promscrape.config=" + path, "-remoteWrite.url=" + remote_write_url,
        "-remoteWrite.tmpDataPath=" + dir() + "/queue", "-httpListenAddr=127.0.0.1:{port}",
        "-loggerLevel=ERROR",
        // As dashboards/provisioning/vmagent.yml says to run it (the
        // default, 16 MiB of text, is a 11k-port fabric's slow job).
        "-promscrape.maxScrapeSize=256MB",
        // Sends every second rather than once a batch fills.
        "-remoteWrite.flushInterval=1s"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    start(argv, "/health");
  }
};

class VmAlert : public QueryService {
 public:
  VmAlert(const std::string& rules_file, const VictoriaMetrics& store) : QueryService("vmalert") {
    start({"/usr/bin/vmalert", "-rule=" + rules_file, "-datasource.url=" + store.url(),
           "-remoteWrite.url=" + store.url(), "-remoteRead.url=" + store.url(),
           "-evaluationInterval=1s", "-remoteWrite.flushInterval=1s",
           "-httpListenAddr=127.0.0.1:{port}", "-loggerLevel=FATAL",
           // vmalert 1.79 wants somewhere to send alerts; the test reads
           // them from /api/v1/alerts, so a port nobody listens on (the
           // failed sends are why the log level is FATAL).
           "-notifier.url=http://127.0.0.1:" + std::to_string(free_port())},
          "/health");
  }
};

}  // namespace ibfx::test
