#include "analysis/congestion_event_state.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "analysis/json_fields.h"

namespace ibfx {
namespace {

using nlohmann::json;

constexpr std::array<CongestionCause, kCauseCount> kCauses{
    CongestionCause::kIncast,           CongestionCause::kOversubscribed,
    CongestionCause::kRoutingImbalance, CongestionCause::kSlowReceiver,
    CongestionCause::kDegradedLink,     CongestionCause::kUnexplained,
    CongestionCause::kFlowCollision,    CongestionCause::kUnevenUplinks};

json node_json(const EventNode& n) {
  return json{{"node_guid", guid_hex(n.guid)}, {"node_name", n.name}};
}

using json_fields::BadField;
using json_fields::count;
using json_fields::field;
using json_fields::guid;
using json_fields::number;
using json_fields::text;

CongestionCause cause(const json& object, const char* key, const std::string& where) {
  const std::string name = text(object, key, where);
  for (const CongestionCause c : kCauses) {
    if (cause_name(c) == name) return c;
  }
  throw BadField(where + "." + key + ": unknown cause \"" + name + "\"");
}

EventNode event_node(const json& object, const std::string& where) {
  return EventNode{guid(object, "node_guid", where), text(object, "node_name", where)};
}

// The root port and its far end.
void decode_root(const json& j, const std::string& where, CongestionEvent& e) {
  const json& root = field(j, "root", where);
  e.root = event_node(root, where + ".root");
  e.root_port = static_cast<std::uint8_t>(count(root, "port", where + ".root", 255));
  e.far = EventNode{guid(root, "remote_node_guid", where + ".root"),
                    text(root, "remote_node_name", where + ".root")};
  e.far_port = static_cast<std::uint8_t>(count(root, "remote_port", where + ".root", 255));
}

// The cause, the times, the peak and the counts.
void decode_numbers(const json& j, const std::string& where, CongestionEvent& e) {
  e.cause = cause(j, "cause", where);
  e.start = number(j, "start", where);
  e.last_seen = number(j, "last_seen", where);
  e.end = json_fields::event_end(j, where);
  e.peak_score = number(j, "peak_score", where);
  e.peak_at = number(j, "peak_at", where);
  e.peak_victims = count(j, "peak_victims", where);
  e.sweeps = count(j, "sweeps", where);
  e.congested_seconds = number(j, "congested_seconds", where);
  e.absent_sweeps = static_cast<std::uint32_t>(count(j, "absent_sweeps", where, UINT32_MAX));
}

std::vector<int> decode_rails(const json& j, const std::string& where) {
  const json& rails = field(j, "rails", where);
  if (!rails.is_array()) throw BadField(where + ".rails: not an array");
  std::vector<int> out;
  for (const json& r : rails) {
    if (!r.is_number_unsigned() || r.get<std::uint64_t>() > 1u << 20) {
      throw BadField(where + ".rails: not a rail number");
    }
    out.push_back(r.get<int>());
  }
  return out;
}

// The leaves under the root (at most kMaxLeavesPerEvent), and whether
// there were more.
void decode_leaves(const json& j, const std::string& where, CongestionEvent& e) {
  const json& leaves = field(j, "leaves", where);
  if (!leaves.is_array() || leaves.size() > kMaxLeavesPerEvent) {
    throw BadField(where + ".leaves: not an array of at most " +
                   std::to_string(kMaxLeavesPerEvent));
  }
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    e.leaves.push_back(event_node(leaves[i], where + ".leaves[" + std::to_string(i) + "]"));
  }
  const json& truncated = field(j, "leaves_truncated", where);
  if (!truncated.is_boolean()) throw BadField(where + ".leaves_truncated: not a boolean");
  e.leaves_truncated = truncated.get<bool>();
}

// A list of at most kMaxJobsPerEvent job ids; `where` names the list.
std::vector<std::uint64_t> decode_job_ids(const json& jobs, const std::string& where) {
  if (!jobs.is_array() || jobs.size() > kMaxJobsPerEvent) {
    throw BadField(where + ": not an array of at most " + std::to_string(kMaxJobsPerEvent));
  }
  std::vector<std::uint64_t> ids;
  for (const json& id : jobs) {
    if (!id.is_number_unsigned()) throw BadField(where + ": not a job id");
    ids.push_back(id.get<std::uint64_t>());
  }
  return ids;
}

// The jobs came with the Slurm join: a file without them has none.
void decode_jobs(const json& j, const std::string& where, CongestionEvent& e) {
  if (!j.contains("jobs")) return;
  e.jobs = decode_job_ids(j["jobs"], where + ".jobs");
  if (!std::is_sorted(e.jobs.begin(), e.jobs.end()) ||
      std::adjacent_find(e.jobs.begin(), e.jobs.end()) != e.jobs.end()) {
    throw BadField(where + ".jobs: not ascending");
  }
  const json& jobs_truncated = field(j, "jobs_truncated", where);
  if (!jobs_truncated.is_boolean()) throw BadField(where + ".jobs_truncated: not a boolean");
  e.jobs_truncated = jobs_truncated.get<bool>();
}

EventSender decode_sender(const json& sender, const std::string& at) {
  EventSender s;
  s.node = event_node(sender, at);
  s.port = static_cast<std::uint8_t>(count(sender, "port", at, 255));
  s.bytes_per_second = number(sender, "bytes_per_second", at);
  s.jobs = decode_job_ids(field(sender, "jobs", at), at + ".jobs");
  return s;
}

// The senders came with the routes (issue #41): a file without them has none.
void decode_senders(const json& j, const std::string& where, CongestionEvent& e) {
  if (!j.contains("senders")) return;
  const json& senders = j["senders"];
  if (!senders.is_array() || senders.size() > kMaxSendersPerEvent) {
    throw BadField(where + ".senders: not an array of at most " +
                   std::to_string(kMaxSendersPerEvent));
  }
  for (std::size_t i = 0; i < senders.size(); ++i) {
    e.senders.push_back(decode_sender(senders[i], where + ".senders[" + std::to_string(i) + "]"));
  }
}

CongestionEvent decode_event(const json& j, const std::string& where) {
  CongestionEvent e;
  e.id = count(j, "id", where);
  decode_root(j, where, e);
  decode_numbers(j, where, e);
  e.rails = decode_rails(j, where);
  decode_leaves(j, where, e);
  decode_jobs(j, where, e);
  decode_senders(j, where, e);
  return e;
}

json senders_json(const std::vector<EventSender>& senders) {
  json list = json::array();
  for (const EventSender& s : senders) {
    json one = node_json(s.node);
    one["port"] = s.port;
    one["bytes_per_second"] = s.bytes_per_second;
    one["jobs"] = s.jobs;
    list.push_back(std::move(one));
  }
  return list;
}

// One event as the file keeps it.
json event_state_json(const CongestionEvent& e) {
  json j;
  j["id"] = e.id;
  j["state"] = e.active() ? "active" : "ended";
  j["root"] = node_json(e.root);
  j["root"]["port"] = e.root_port;
  j["root"]["remote_node_guid"] = guid_hex(e.far.guid);
  j["root"]["remote_node_name"] = e.far.name;
  j["root"]["remote_port"] = e.far_port;
  j["cause"] = std::string(cause_name(e.cause));
  j["start"] = e.start;
  if (e.end) j["end"] = *e.end;
  j["last_seen"] = e.last_seen;
  j["duration_seconds"] = e.duration();
  j["peak_score"] = e.peak_score;
  j["peak_at"] = e.peak_at;
  j["peak_victims"] = e.peak_victims;
  j["sweeps"] = e.sweeps;
  j["congested_seconds"] = e.congested_seconds;
  j["rails"] = e.rails;
  json leaves = json::array();
  for (const EventNode& l : e.leaves) leaves.push_back(node_json(l));
  j["leaves"] = std::move(leaves);
  j["leaves_truncated"] = e.leaves_truncated;
  j["jobs"] = e.jobs;
  j["jobs_truncated"] = e.jobs_truncated;
  j["senders"] = senders_json(e.senders);
  j["absent_sweeps"] = e.absent_sweeps;
  return j;
}

}  // namespace

std::string encode_event_state(const EventTrackerState& state, double saved_at) {
  json j =
      json_fields::versioned_state(kEventStateFormat, kEventStateVersion, saved_at, state.next_id);
  json counters = json::object();
  for (const CongestionCause c : kCauses) {
    const auto i = static_cast<std::size_t>(c);
    counters[std::string(cause_name(c))] =
        json{{"events", state.counters.started[i]}, {"seconds", state.counters.seconds[i]}};
  }
  j["counters"] = std::move(counters);
  json events = json::array();
  for (const CongestionEvent& e : state.events) events.push_back(event_state_json(e));
  j["events"] = std::move(events);
  return json_fields::dump(j) + "\n";
}

bool decode_event_state(std::string_view text_in, EventTrackerState& state, std::string& error) {
  state = EventTrackerState{};
  EventTrackerState s;
  const bool ok = json_fields::decode_versioned_text(
      text_in, kEventStateFormat, kEventStateVersion, "congestion event state", error,
      [&s](const json& doc) {
        s.next_id = count(doc, "next_id", "");
        const json& counters = field(doc, "counters", "");
        for (const CongestionCause c : kCauses) {
          const std::string name(cause_name(c));
          const auto i = static_cast<std::size_t>(c);
          // A cause missing from the file counted nothing yet.
          if (!counters.is_object()) throw BadField("counters: not an object");
          if (!counters.contains(name)) continue;
          const json& per = counters[name];
          s.counters.started[i] = count(per, "events", "counters." + name);
          s.counters.seconds[i] = number(per, "seconds", "counters." + name);
        }
        json_fields::for_each_element(doc, "events", [&s](const json& e, const std::string& where) {
          s.events.push_back(decode_event(e, where));
        });
      });
  if (ok) state = std::move(s);
  return ok;
}

}  // namespace ibfx
