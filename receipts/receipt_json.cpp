#include "receipts/receipt_json.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string_view>
#include <utility>

#include "base/log_text.h"
#include "base/utc_time.h"
#include "receipts/receipt_json_value.h"

namespace ibfx {

namespace {

using Json = nlohmann::json;

}  // namespace

Json receipt_port_json(const ReceiptPort& p) {
  return Json{{"guid", p.guid},
              {"port", p.port},
              {"host", p.host},
              {"device", p.device},
              {"stall_ratio", p.stall_ratio}};
}

namespace {

// Reads a receipt field by field: every type checked, so that a hostile or
// torn file is an error, never an exception (nlohmann's get<> throws).
class Reader {
 public:
  explicit Reader(std::string& error) : error_(error) {}
  bool ok() const { return error_.empty(); }

  const Json* field(const Json& object, const char* name) {
    if (!ok()) return nullptr;
    if (!object.is_object()) return fail(name, "not in an object");
    const auto it = object.find(name);
    if (it == object.end()) return fail(name, "missing");
    return &*it;
  }
  void number(const Json& object, const char* name, double& out) {
    const Json* v = field(object, name);
    if (v == nullptr) return;
    if (!v->is_number()) {
      fail(name, "not a number");
      return;
    }
    out = v->get<double>();
    if (!std::isfinite(out)) fail(name, "not finite");
  }
  template <typename Int>
  void integer(const Json& object, const char* name, Int& out) {
    const Json* v = field(object, name);
    if (v == nullptr) return;
    if (!v->is_number_unsigned() || v->get<std::uint64_t>() > std::numeric_limits<Int>::max()) {
      fail(name, "not an unsigned integer in range");
      return;
    }
    out = static_cast<Int>(v->get<std::uint64_t>());
  }
  void signed_int(const Json& object, const char* name, int& out) {
    const Json* v = field(object, name);
    if (v == nullptr) return;
    if (!v->is_number_integer() || v->get<std::int64_t>() < -1 ||
        v->get<std::int64_t>() > 1000000) {
      fail(name, "not an integer in range");
      return;
    }
    out = static_cast<int>(v->get<std::int64_t>());
  }
  void text(const Json& object, const char* name, std::string& out) {
    const Json* v = field(object, name);
    if (v == nullptr) return;
    if (!v->is_string()) {
      fail(name, "not a string");
      return;
    }
    out = v->get<std::string>();
  }
  void flag(const Json& object, const char* name, bool& out) {
    const Json* v = field(object, name);
    if (v == nullptr) return;
    if (!v->is_boolean()) {
      fail(name, "not a boolean");
      return;
    }
    out = v->get<bool>();
  }
  const Json* array(const Json& object, const char* name) {
    const Json* v = field(object, name);
    if (v != nullptr && !v->is_array()) return fail(name, "not an array");
    return v;
  }
  void port(const Json& object, const char* name, ReceiptPort& out) {
    const Json* v = field(object, name);
    if (v == nullptr) return;
    integer(*v, "guid", out.guid);
    integer(*v, "port", out.port);
    text(*v, "host", out.host);
    text(*v, "device", out.device);
    number(*v, "stall_ratio", out.stall_ratio);
  }
  const Json* fail(const char* name, const char* why) {
    if (ok()) error_ = std::string(name) + ": " + why;
    return nullptr;
  }

 private:
  std::string& error_;
};

std::string percent_tenths(double share) {
  std::array<char, 32> buf{};
  std::snprintf(buf.data(), buf.size(), "%.1f %%", 100 * share);
  return buf.data();
}

std::string whole(double v) {
  std::array<char, 48> buf{};
  std::snprintf(buf.data(), buf.size(), "%.0f", v);
  return buf.data();
}

}  // namespace

Json receipt_json_value(const JobReceipt& r) {
  Json rails = Json::array();
  for (const ReceiptRail& rail : r.rails) {
    rails.push_back(Json{{"rail", rail.rail},
                         {"bytes_sent", rail.bytes_sent},
                         {"bytes_received", rail.bytes_received}});
  }
  Json culprits = Json::array();
  for (const ReceiptCulprit& c : r.culprits) {
    culprits.push_back(Json{{"job_id", c.job_id}, {"stall_seconds", c.stall_seconds}});
  }
  Json links = Json::array();
  for (const ReceiptLinkIssue& l : r.links) {
    links.push_back(Json{{"port", receipt_port_json(l.port)},
                         {"condition", link_condition_name(l.condition)},
                         {"downs", l.downs},
                         {"first_seen", l.first_seen},
                         {"last_seen", l.last_seen}});
  }
  return Json{{"version", kReceiptJsonVersion},
              {"job_id", r.job_id},
              {"name", r.name},
              {"user", r.user},
              {"partition", r.partition},
              {"hosts", r.hosts},
              {"start", r.start},
              {"end", r.end},
              {"end_known", r.end_known},
              {"duration_seconds", r.end - r.start},
              {"observed_seconds", r.observed_seconds},
              {"missed_seconds", r.missed_seconds},
              {"bytes_sent", r.bytes_sent},
              {"bytes_received", r.bytes_received},
              {"rails", std::move(rails)},
              {"cross_spine_share", r.cross_spine_share},
              {"cross_spine_basis", cross_spine_basis_name(r.cross_spine_basis)},
              {"port_seconds", r.port_seconds},
              {"stall_seconds", r.stall_seconds},
              {"stall_ratio", r.stall_ratio()},
              {"worst_port", receipt_port_json(r.worst_port)},
              {"worst_minute", r.worst_minute},
              {"worst_minute_ratio", r.worst_minute_ratio},
              {"self_stall_seconds", r.self_stall_seconds},
              {"other_jobs_stall_seconds", r.other_jobs_stall_seconds},
              {"unattributed_stall_seconds", r.unattributed_stall_seconds},
              {"outside_trees_stall_seconds", r.outside_trees_stall_seconds},
              {"culprits", std::move(culprits)},
              {"links", std::move(links)},
              {"verdict", receipt_verdict_name(r.verdict)},
              {"line", r.line}};
}

namespace {

// receipt_from_json_value's steps, each a group of fields in the order
// receipt_json_value writes them; the first field amiss is the error.

bool version_readable(Reader& in, const Json& v, std::string& error) {
  int version = 0;
  in.signed_int(v, "version", version);
  if (in.ok() && version != kReceiptJsonVersion) {
    error = "version " + std::to_string(version) + ": this build reads version " +
            std::to_string(kReceiptJsonVersion);
    return false;
  }
  return true;
}

// The job: its id, name, user, partition and hosts.
void read_identity(Reader& in, const Json& v, JobReceipt& r) {
  in.integer(v, "job_id", r.job_id);
  in.text(v, "name", r.name);
  in.text(v, "user", r.user);
  in.text(v, "partition", r.partition);
  if (const Json* hosts = in.array(v, "hosts")) {
    for (const Json& h : *hosts) {
      if (!h.is_string()) {
        in.fail("hosts", "not a list of strings");
        break;
      }
      r.hosts.push_back(h.get<std::string>());
    }
  }
}

// When it ran, what it sent by rail, and what share crossed a spine.
void read_traffic(Reader& in, const Json& v, JobReceipt& r) {
  in.number(v, "start", r.start);
  in.number(v, "end", r.end);
  in.flag(v, "end_known", r.end_known);
  in.number(v, "observed_seconds", r.observed_seconds);
  in.number(v, "missed_seconds", r.missed_seconds);
  in.number(v, "bytes_sent", r.bytes_sent);
  in.number(v, "bytes_received", r.bytes_received);
  if (const Json* rails = in.array(v, "rails")) {
    for (const Json& j : *rails) {
      ReceiptRail rail;
      in.signed_int(j, "rail", rail.rail);
      in.number(j, "bytes_sent", rail.bytes_sent);
      in.number(j, "bytes_received", rail.bytes_received);
      r.rails.push_back(rail);
    }
  }
  in.number(v, "cross_spine_share", r.cross_spine_share);
  std::string basis;
  in.text(v, "cross_spine_basis", basis);
  if (basis == "routes") {
    r.cross_spine_basis = CrossSpineBasis::kRoutes;
  } else if (basis == "uplinks") {
    r.cross_spine_basis = CrossSpineBasis::kUplinks;
  } else if (basis != "unknown" && in.ok()) {
    in.fail("cross_spine_basis", "not routes, uplinks or unknown");
  }
}

// Its ports' stall: the sums, the worst port and minute, and whose it was.
void read_stall(Reader& in, const Json& v, JobReceipt& r) {
  in.number(v, "port_seconds", r.port_seconds);
  in.number(v, "stall_seconds", r.stall_seconds);
  in.port(v, "worst_port", r.worst_port);
  in.number(v, "worst_minute", r.worst_minute);
  in.number(v, "worst_minute_ratio", r.worst_minute_ratio);
  in.number(v, "self_stall_seconds", r.self_stall_seconds);
  in.number(v, "other_jobs_stall_seconds", r.other_jobs_stall_seconds);
  in.number(v, "unattributed_stall_seconds", r.unattributed_stall_seconds);
  in.number(v, "outside_trees_stall_seconds", r.outside_trees_stall_seconds);
  if (const Json* culprits = in.array(v, "culprits")) {
    for (const Json& j : *culprits) {
      ReceiptCulprit c;
      in.integer(j, "job_id", c.job_id);
      in.number(j, "stall_seconds", c.stall_seconds);
      r.culprits.push_back(c);
    }
  }
}

// The link conditions seen on its ports.
void read_links(Reader& in, const Json& v, JobReceipt& r) {
  const Json* links = in.array(v, "links");
  if (links == nullptr) return;
  for (const Json& j : *links) {
    ReceiptLinkIssue l;
    in.port(j, "port", l.port);
    std::string condition;
    in.text(j, "condition", condition);
    if (!in.ok()) break;
    const auto c = parse_link_condition(condition);
    if (!c) {
      in.fail("condition", "not a link condition");
      break;
    }
    l.condition = *c;
    in.integer(j, "downs", l.downs);
    in.number(j, "first_seen", l.first_seen);
    in.number(j, "last_seen", l.last_seen);
    r.links.push_back(std::move(l));
  }
}

void read_verdict(Reader& in, const Json& v, JobReceipt& r) {
  std::string verdict;
  in.text(v, "verdict", verdict);
  if (in.ok() && !parse_receipt_verdict(verdict, r.verdict)) in.fail("verdict", "unknown");
  in.text(v, "line", r.line);
}

}  // namespace

bool receipt_from_json_value(const Json& v, JobReceipt& out, std::string& error) {
  error.clear();
  Reader in(error);
  if (!version_readable(in, v, error)) return false;
  JobReceipt r;
  read_identity(in, v, r);
  read_traffic(in, v, r);
  read_stall(in, v, r);
  read_links(in, v, r);
  read_verdict(in, v, r);
  if (!in.ok()) return false;
  out = std::move(r);
  return true;
}

std::string receipt_to_json(const JobReceipt& receipt) {
  return receipt_json_value(receipt).dump(-1, ' ', false, Json::error_handler_t::replace);
}

bool receipt_from_json(const std::string& text, JobReceipt& out, std::string& error) {
  const Json v = Json::parse(text, nullptr, false);
  if (v.is_discarded()) {
    error = "not JSON";
    return false;
  }
  if (!v.is_object()) {
    error = "not a JSON object";
    return false;
  }
  return receipt_from_json_value(v, out, error);
}

std::string receipt_to_text(const JobReceipt& r) {
  // Every name in it is untrusted (Slurm's, the node descriptions'):
  // printable() keeps a terminal from being driven by one.
  std::string t;
  t += "job " + std::to_string(r.job_id) + " " + quote(r.name) + " user " + printable(r.user) +
       " partition " + printable(r.partition) + "\n";
  t += printable(r.line, kReceiptLineMax) + "\n";
  t += "verdict: " + std::string(receipt_verdict_name(r.verdict)) + "\n";
  t += "ran: " + utc_time_text(r.start) + " to " + utc_time_text(r.end) +
       (r.end_known ? "" : " (end not known: the job source was down)") + ", " +
       whole(r.end - r.start) + " s, observed " + whole(r.observed_seconds) + " s, missed " +
       whole(r.missed_seconds) + " s\n";
  t += "hosts (" + std::to_string(r.hosts.size()) + "):";
  for (std::size_t i = 0; i < r.hosts.size() && i < 16; ++i) t += " " + printable(r.hosts[i]);
  if (r.hosts.size() > 16) t += " ...";
  t += "\n";
  t += "traffic: sent " + whole(r.bytes_sent) + " B, received " + whole(r.bytes_received) + " B";
  if (r.cross_spine_share >= 0) {
    t += ", " + percent_tenths(r.cross_spine_share) + " across a spine (" +
         std::string(cross_spine_basis_name(r.cross_spine_basis)) + ")";
  }
  t += "\n";
  for (const ReceiptRail& rail : r.rails) {
    t += "  rail " + (rail.rail < 0 ? std::string("?") : std::to_string(rail.rail)) + ": sent " +
         whole(rail.bytes_sent) + " B, received " + whole(rail.bytes_received) + " B\n";
  }
  t += "stall: " + percent_tenths(r.stall_ratio()) + " of " + whole(r.port_seconds) +
       " port-seconds\n";
  if (r.stall_seconds > 0) {
    const double s = r.stall_seconds;
    t += "  self " + percent_tenths(r.self_stall_seconds / s) + ", other jobs " +
         percent_tenths(r.other_jobs_stall_seconds / s) + ", unattributed " +
         percent_tenths(r.unattributed_stall_seconds / s) + ", outside trees " +
         percent_tenths(r.outside_trees_stall_seconds / s) + "\n";
    for (const ReceiptCulprit& c : r.culprits) {
      t += "  job " + std::to_string(c.job_id) + ": " + percent_tenths(c.stall_seconds / s) + "\n";
    }
    t += "  worst port: " + printable(r.worst_port.device) + " on " + printable(r.worst_port.host) +
         " port " + std::to_string(r.worst_port.port) + ", " +
         percent_tenths(r.worst_port.stall_ratio) + "\n";
    if (r.worst_minute > 0) {
      t += "  worst minute: " + utc_time_text(r.worst_minute) + ", " +
           percent_tenths(r.worst_minute_ratio) + "\n";
    }
  }
  for (const ReceiptLinkIssue& l : r.links) {
    t += "link: " + printable(l.port.device) + " on " + printable(l.port.host) + " port " +
         std::to_string(l.port.port) + " " + std::string(link_condition_name(l.condition)) + ", " +
         std::to_string(l.downs) + " downs, " + utc_time_text(l.first_seen) + " to " +
         utc_time_text(l.last_seen) + "\n";
  }
  return t;
}

}  // namespace ibfx
