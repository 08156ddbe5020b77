// ibfabric_exporter: InfiniBand fabric telemetry for Prometheus.
#include <sys/resource.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>
#include <utility>

#include "base/log.h"
#include "client/check_node.h"
#include "client/job_receipt.h"
#include "config/command_line.h"
#include "config/config.h"
#include "daemon/daemon_config.h"
#include "daemon/exporter.h"
#include "daemon/systemd_notify.h"
#include "daemon/web.h"
#include "discovery/discovery.h"
#include "discovery/discovery_process.h"
#include "exposition/gzip.h"
#include "http/http_server.h"
#include "http/web_config.h"
#include "mad/mad_worker.h"

namespace {

// SIGHUP: re-read the command line's config file (flags still override it),
// the node-name-map and the analysis sections; apply all or nothing.
void reload(int argc, char** argv, ibfx::Exporter& exporter, ibfx::HttpServer& server) {
  ibfx::notify_reloading();
  try {
    // Everything is loaded (certificate and key included) before anything
    // is applied: the same loader as at start-up.
    ibfx::DaemonConfig loaded = ibfx::load_daemon_config(ibfx::parse_command_line(argc, argv));
    ibfx::apply_log_settings(loaded.cli.config);
    for (const std::string& key :
         exporter.reload(loaded.cli.config, std::move(loaded.names), loaded.analysis)) {
      ibfx::log_warn(key + " changed: takes effect after a restart");
    }
    server.set_web_config(loaded.web);
  } catch (const std::exception& e) {
    ibfx::log_error(std::string("reload rejected, keeping the running configuration: ") + e.what());
  }
  ibfx::notify_ready();
}

// Every key of the effective configuration (file, then flags) on one line,
// so a log shows what the daemon actually ran with.
std::string effective_configuration(const ibfx::CommandLine& cli) {
  std::string text =
      "ibfabric_exporter " IBFX_VERSION " starting; config file " +
      (cli.config_file.empty() ? std::string("none (built-in defaults)") : cli.config_file) +
      "; effective configuration:";
  for (const std::string_view key : ibfx::config_keys()) {
    text += " ";
    text += key;
    text += "=" + ibfx::config_value_text(cli.config, key);
  }
  return text;
}

// Each HTTP connection costs a descriptor, and the connection cap is derived
// from RLIMIT_NOFILE; systemd and most shells start services at a soft limit
// of 1024 with a much higher hard limit, so take the hard one (as Go's
// runtime does since 1.19). Done after the MAD worker started, so the
// children keep the limit they were given.
void raise_descriptor_limit() {
  rlimit nofile{};
  if (::getrlimit(RLIMIT_NOFILE, &nofile) != 0) return;
  if (nofile.rlim_cur == nofile.rlim_max) return;
  const rlim_t before = nofile.rlim_cur;
  nofile.rlim_cur = nofile.rlim_max;
  if (::setrlimit(RLIMIT_NOFILE, &nofile) != 0) {
    ibfx::log_warn("cannot raise the descriptor limit (RLIMIT_NOFILE) from " +
                   std::to_string(before) + ": " + std::strerror(errno));
    return;
  }
  ibfx::log_info("raised the descriptor limit (RLIMIT_NOFILE) from " + std::to_string(before) +
                 " to its hard limit " +
                 (nofile.rlim_max == RLIM_INFINITY ? std::string("(unlimited)")
                                                   : std::to_string(nofile.rlim_max)) +
                 " for HTTP connections");
}

ibfx::HttpServerLimits http_limits(const ibfx::WebConnectionLimits& web) {
  ibfx::HttpServerLimits limits;
  limits.header_timeout = web.header_timeout;
  limits.idle_timeout = web.idle_timeout;
  limits.max_connections = static_cast<std::size_t>(web.max_connections);
  limits.max_connections_per_client = static_cast<std::size_t>(web.max_connections_per_client);
  return limits;
}

int run_once(ibfx::Exporter& exporter, const ibfx::Config& config) {
  // Discovery may fail while the SM is still assigning LIDs: retry briefly.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!exporter.discover_now()) {
    if (std::chrono::steady_clock::now() > give_up) {
      ibfx::log_error("discovery did not succeed within 30 s");
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  // Two readings one interval apart, so that derived values have a delta.
  exporter.sweep_now();
  std::this_thread::sleep_for(config.sweep_interval);
  exporter.sweep_now();
  // The published bytes themselves, inflated: what a scrape would get.
  const auto published = exporter.publication();
  ibfx::DeflateRunReader reader(published->exposition.runs());
  std::string piece;
  bool more = true;
  while (more) {
    more = reader.read(piece, std::size_t{1} << 20);
    std::cout << piece;
  }
  return 0;
}

// The modes that are not the daemon: the node check Slurm runs, and the two
// hidden children the daemon starts. Their exit status, or nothing.
std::optional<int> run_other_mode(int argc, char** argv) {
  // Client mode: Slurm's HealthCheckProgram (client/check_node.h, docs/nodes.md).
  if (ibfx::is_check_node_invocation(argc, argv)) return ibfx::check_node_main(argc, argv);
  // Client mode: a job's fabric receipt into Slurm (client/job_receipt.h, docs/receipts.md).
  if (ibfx::is_job_receipt_invocation(argc, argv)) return ibfx::job_receipt_main(argc, argv);
  // Hidden mode: the child that owns the umad port (mad/mad_worker.h).
  if (ibfx::is_mad_worker_invocation(argc, argv)) return ibfx::run_mad_worker(argc, argv);
  // Hidden mode: one discovery in a process of its own (discovery_process.h).
  if (ibfx::is_discover_once_invocation(argc, argv)) return ibfx::run_discover_once(argc, argv);
  return std::nullopt;
}

// Parses the command line and loads the configuration into `loaded`; the
// exit status when the process ends here (--help, --version,
// --check-config, or an error the operator must fix), else nothing.
std::optional<int> load_configuration(int argc, char** argv, ibfx::DaemonConfig& loaded) {
  ibfx::CommandLine parsed;
  try {
    parsed = ibfx::parse_command_line(argc, argv);
  } catch (const ibfx::ConfigError& e) {
    std::cerr << "ibfabric_exporter: " << e.what() << "\n"
              << "Try 'ibfabric_exporter --help'.\n";
    return 2;
  }
  if (parsed.show_help) {
    std::cout << ibfx::usage_text();
    return 0;
  }
  if (parsed.show_version) {
    std::cout << "ibfabric_exporter " << IBFX_VERSION << "\n";
    return 0;
  }
  try {
    loaded = ibfx::load_daemon_config(std::move(parsed));
  } catch (const std::exception& e) {
    std::cerr << "ibfabric_exporter: " << e.what() << "\n";
    return 2;
  }
  ibfx::apply_log_settings(loaded.cli.config);
  if (loaded.cli.check_config) {
    std::cout << "configuration OK\n";
    return 0;
  }
  return std::nullopt;
}

// The started MAD worker, or null (logged) when no umad port can be opened.
std::unique_ptr<ibfx::MadWorker> start_mad_worker(const ibfx::Config& config) {
  ibfx::MadWorkerOptions options;
  options.ca = config.ca;
  options.ca_port = config.ca_port;
  options.log_level = config.log_level;
  options.log_format = config.log_format;
  auto worker = std::make_unique<ibfx::MadWorker>(options);
  try {
    worker->start();
  } catch (const std::exception& e) {
    ibfx::log_error(std::string(e.what()) +
                    " (no InfiniBand HCA? the README shows how to run on a simulated fabric)");
    return nullptr;
  }
  return worker;
}

// Discoveries use the port the worker resolved, not "the first CA", and
// report their progress to the log and to systemd.
ibfx::DiscoveryProcessOptions discovery_options(const ibfx::Config& config,
                                                const ibfx::MadWorker& worker) {
  ibfx::DiscoveryProcessOptions options;
  options.ca = worker.ca_name();
  options.ca_port = worker.ca_port();
  options.log_level = config.log_level;
  options.log_format = config.log_format;
  options.progress = [](std::chrono::seconds elapsed) {
    const std::string text =
        "discovering the fabric: " + std::to_string(elapsed.count()) + " s so far";
    ibfx::log_info(text);
    ibfx::notify_status(text);
  };
  return options;
}

// The HTTP server, listening; null (logged) when it cannot bind.
std::unique_ptr<ibfx::HttpServer> start_http_server(boost::asio::io_context& io,
                                                    ibfx::Exporter& exporter,
                                                    const ibfx::Config& config,
                                                    const ibfx::WebConfig& web) {
  raise_descriptor_limit();
  try {
    return std::make_unique<ibfx::HttpServer>(
        io, config.listen_address,
        [&exporter, path = config.telemetry_path](const ibfx::HttpRequest& req) {
          return ibfx::handle_web(exporter, req, path);
        },
        http_limits(config.web), web);
  } catch (const std::exception& e) {
    ibfx::log_error(e.what());
    return nullptr;
  }
}

// SIGHUP reloads; SIGINT and SIGTERM stop the server and the event loop.
class SignalHandler {
 public:
  SignalHandler(boost::asio::io_context& io, int argc, char** argv, ibfx::Exporter& exporter,
                ibfx::HttpServer& server)
      : io_(io),
        signals_(io, SIGINT, SIGTERM, SIGHUP),
        argc_(argc),
        argv_(argv),
        exporter_(exporter),
        server_(server) {
    wait();
  }

 private:
  void wait() {
    signals_.async_wait(
        [this](const boost::system::error_code& ec, int sig) { on_signal(ec, sig); });
  }
  void on_signal(const boost::system::error_code& ec, int sig) {
    if (ec) return;
    if (sig == SIGHUP) {
      reload(argc_, argv_, exporter_, server_);
      wait();
      return;
    }
    ibfx::log_info(std::string("received ") + (sig == SIGINT ? "SIGINT" : "SIGTERM") +
                   ", shutting down");
    ibfx::notify_stopping();
    server_.stop();
    io_.stop();
  }

  boost::asio::io_context& io_;
  boost::asio::signal_set signals_;
  const int argc_;
  char** const argv_;
  ibfx::Exporter& exporter_;
  ibfx::HttpServer& server_;
};

// WatchdogSec=: ping at half the interval from the HTTP thread, so a hung
// event loop gets the service restarted.
class Watchdog {
 public:
  explicit Watchdog(boost::asio::io_context& io) : timer_(io) {
    if (const auto interval = ibfx::watchdog_interval()) {
      half_ = *interval / 2;
      arm();
    }
  }

 private:
  void arm() {
    ibfx::notify_watchdog();
    timer_.expires_after(half_);
    timer_.async_wait([this](const boost::system::error_code& ec) {
      if (!ec) arm();
    });
  }

  boost::asio::steady_timer timer_;
  std::chrono::microseconds half_{};
};

std::string listening_text(const ibfx::Config& config, const ibfx::WebConfig& web,
                           const ibfx::HttpServer& server, const ibfx::MadWorker& worker) {
  return "listening on " + config.listen_address + " (port " + std::to_string(server.port()) +
         "), CA " + worker.ca_name() + " port " + std::to_string(worker.ca_port()) +
         ", sweep interval " + std::to_string(config.sweep_interval.count()) + " ms" +
         (web.tls ? ", TLS" : "") + (web.basic_auth_users.empty() ? "" : ", basic auth") +
         ", up to " + std::to_string(server.max_connections()) + " connections" +
         (config.web.max_connections_per_client > 0
              ? " (" + std::to_string(config.web.max_connections_per_client) + " per client)"
              : std::string());
}

// Serves HTTP and sweeps until SIGINT or SIGTERM, then stops the children
// and the exporter while the server still exists (the exporter asks it for
// its connection counts); false (logged) when the server cannot start.
bool serve(int argc, char** argv, const ibfx::DaemonConfig& loaded, ibfx::Exporter& exporter,
           ibfx::MadWorker& worker, ibfx::DiscoveryProcess& discovery_process) {
  const ibfx::Config& config = loaded.cli.config;
  boost::asio::io_context io;
  const std::unique_ptr<ibfx::HttpServer> server =
      start_http_server(io, exporter, config, loaded.web);
  if (!server) return false;
  exporter.set_http_stats([srv = server.get()] {
    return std::pair{srv->evicted_connections(), srv->refused_connections()};
  });
  const SignalHandler signals(io, argc, argv, exporter, *server);
  const Watchdog watchdog(io);
  // Before the first sweep, so that events restored from the last run
  // continue instead of starting again.
  exporter.keep_events_in(config.state_directory);
  exporter.start();
  // READY=1 as soon as /metrics is served (the listener is bound above), not
  // after the first sweep: with Type=notify, `systemctl start` (and the
  // postinst of `apt install`) wait for it, and discovering and sweeping a
  // large fabric takes minutes. /-/ready tells when the first sweep is in;
  // STATUS= shows the progress meanwhile.
  ibfx::notify_ready();
  ibfx::notify_status("listening on " + config.listen_address + "; discovering the fabric");
  ibfx::log_info(listening_text(config, loaded.web, *server, worker));
  io.run();
  // The children first: a sweep or discovery waiting on one then ends at once.
  worker.stop();
  discovery_process.stop();
  exporter.stop();
  ibfx::log_info("stopped");
  return true;
}

int run(int argc, char** argv) {
  if (const std::optional<int> status = run_other_mode(argc, argv)) return *status;
  ibfx::DaemonConfig loaded;
  if (const std::optional<int> status = load_configuration(argc, argv, loaded)) return *status;
  const ibfx::Config& config = loaded.cli.config;
  ibfx::log_info(effective_configuration(loaded.cli));

  // Everything that touches libibumad runs in child processes: the sweep's
  // MADs in the MAD worker, so that a device that goes away (HCA reset,
  // driver reload, the simulator restarting) costs a new worker, not a
  // daemon restart; each discovery in a short-lived process of its own.
  // This process never opens a umad device itself.
  const std::unique_ptr<ibfx::MadWorker> worker = start_mad_worker(config);
  if (!worker) return 1;
  ibfx::DiscoveryProcess discovery_process(discovery_options(config, *worker));
  ibfx::Exporter exporter(
      config, std::move(loaded.names), worker->transport(),
      [&discovery_process, discovery = config.discovery] {
        return discovery_process.discover(discovery);
      },
      loaded.analysis);
  exporter.set_transport_health(worker.get());
  // The exporter says what it is doing; systemd hears it here (STATUS=).
  exporter.set_status_callback([](const std::string& text) { ibfx::notify_status(text); });

  if (loaded.cli.once) return run_once(exporter, config);
  return serve(argc, argv, loaded, exporter, *worker, discovery_process) ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  // Errors that are the operator's are reported where they happen (exit 2 for
  // the configuration, 1 for the fabric); this catches the rest (a failed
  // allocation, a thread that cannot start) so the daemon exits with a line
  // in the log instead of std::terminate's abort.
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    ibfx::log_error(std::string("fatal: ") + e.what());
    return 1;
  } catch (...) {
    ibfx::log_error("fatal: an unknown exception");
    return 1;
  }
}
