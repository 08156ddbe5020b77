#include "history/history_state.h"

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "analysis/json_fields.h"
#include "history/history_json.h"

namespace ibfx {
namespace {

using json_fields::BadField;
using json_fields::count;
using json_fields::field;
using json_fields::guid;
using json_fields::number;
using json_fields::text;
using nlohmann::json;

constexpr std::size_t kCellBytes = 6;
// Bounds what a file can make the daemon allocate before it is checked.
constexpr std::size_t kMaxSwitches = 1 << 20;
constexpr std::size_t kMaxFrames = 1 << 20;

json table_json(const HistorySwitchTable& t) {
  json guids = json::array();
  json names = json::array();
  json tiers = json::array();
  json rails = json::array();
  json units = json::array();
  for (const HistorySwitch& s : t.switches) {
    guids.push_back(s.guid);
    names.push_back(s.name);
    tiers.push_back(std::string(tier_name(s.tier)));
    rails.push_back(s.rail);
    units.push_back(s.unit);
  }
  return json{{"guids", std::move(guids)},
              {"names", std::move(names)},
              {"tiers", std::move(tiers)},
              {"rails", std::move(rails)},
              {"units", std::move(units)}};
}

json frame_json(const HistoryFrame& f, std::size_t table) {
  std::vector<std::uint8_t> cells;
  cells.reserve(f.cells.size() * kCellBytes);
  for (const HistoryCell& c : f.cells) {
    cells.push_back(static_cast<std::uint8_t>(c.stall & 0xff));
    cells.push_back(static_cast<std::uint8_t>(c.stall >> 8));
    cells.push_back(static_cast<std::uint8_t>(c.utilization & 0xff));
    cells.push_back(static_cast<std::uint8_t>(c.utilization >> 8));
    cells.push_back(c.port);
    cells.push_back(c.flags);
  }
  json roots = json::array();
  for (const PageRoot& r : f.roots) roots.push_back(history_root_json(r));
  json jobs = json::array();
  for (const HistoryJob& j : f.jobs) {
    jobs.push_back(json{{"id", j.id},
                        {"name", j.name},
                        {"user", j.user},
                        {"stall_max", j.stall_max},
                        {"switches", j.switches}});
  }
  json links = json::array();
  for (const PageLink& l : f.links) links.push_back(history_link_json(l));
  return json{{"time", f.time},
              {"span", f.span},
              {"sweeps", f.sweeps},
              {"table", table},
              {"cells", json::binary(std::move(cells))},
              {"roots", std::move(roots)},
              {"jobs", std::move(jobs)},
              {"links", std::move(links)},
              {"links_total", f.links_total},
              {"sweep", history_sweep_json(f.sweep)}};
}

const json& array_field(const json& j, const char* key, const std::string& where, std::size_t max) {
  const json& a = field(j, key, where);
  if (!a.is_array() || a.size() > max) {
    throw BadField(where + "." + key + ": not an array of at most " + std::to_string(max));
  }
  return a;
}

bool flag(const json& j, const char* key, const std::string& where) {
  const json& v = field(j, key, where);
  if (!v.is_boolean()) throw BadField(where + "." + key + ": not a boolean");
  return v.get<bool>();
}

int small_int(const json& v, const std::string& where) {
  if (!v.is_number_integer() || std::abs(v.get<std::int64_t>()) > (1 << 20)) {
    throw BadField(where + ": not a small integer");
  }
  return v.get<int>();
}

Tier tier_of(const json& v, const std::string& where) {
  const auto t = v.is_string() ? parse_tier(v.get<std::string>()) : std::nullopt;
  if (!t) throw BadField(where + ": not a tier");
  return *t;
}

std::shared_ptr<const HistorySwitchTable> decode_table(const json& j, const std::string& where) {
  const json& guids = array_field(j, "guids", where, kMaxSwitches);
  const json& names = array_field(j, "names", where, kMaxSwitches);
  const json& tiers = array_field(j, "tiers", where, kMaxSwitches);
  const json& rails = array_field(j, "rails", where, kMaxSwitches);
  const json& units = array_field(j, "units", where, kMaxSwitches);
  const std::size_t n = guids.size();
  if (names.size() != n || tiers.size() != n || rails.size() != n || units.size() != n) {
    throw BadField(where + ": arrays of different lengths");
  }
  auto t = std::make_shared<HistorySwitchTable>();
  t->switches.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::string at = where + "[" + std::to_string(i) + "]";
    if (!guids[i].is_number_unsigned()) throw BadField(at + ".guid: not a GUID");
    if (!names[i].is_string()) throw BadField(at + ".name: not a string");
    t->switches.push_back(HistorySwitch{
        guids[i].get<std::uint64_t>(), names[i].get<std::string>(), tier_of(tiers[i], at + ".tier"),
        small_int(rails[i], at + ".rail"), small_int(units[i], at + ".unit")});
  }
  return t;
}

// A list of job labels.
std::vector<std::string> decode_job_labels(const json& j, const char* key,
                                           const std::string& where) {
  std::vector<std::string> out;
  for (const json& id : array_field(j, key, where, 4096)) {
    if (!id.is_string()) throw BadField(where + "." + key + ": not a job");
    out.push_back(id.get<std::string>());
  }
  return out;
}

// A row's "jobs": null (nullopt) when no job source was on.
std::optional<std::vector<std::string>> decode_jobs(const json& j, const std::string& where) {
  if (field(j, "jobs", where).is_null()) return std::nullopt;
  return decode_job_labels(j, "jobs", where);
}

PageRoot decode_root(const json& j, const std::string& where) {
  PageRoot r;
  r.guid = guid(j, "node_guid", where);
  r.name = text(j, "node_name", where);
  r.port = static_cast<int>(count(j, "port", where, 255));
  r.tier = tier_of(field(j, "tier", where), where + ".tier");
  r.cause = text(j, "cause", where);
  r.score = number(j, "score", where);
  r.victims = count(j, "victims", where, UINT32_MAX);
  r.stall = number(j, "stall_ratio", where);
  r.utilization = number(j, "utilization", where);
  r.remote.guid = guid(j, "remote_node_guid", where);
  r.remote.name = text(j, "remote_node_name", where);
  r.remote.port = static_cast<int>(count(j, "remote_port", where, 255));
  r.jobs = decode_jobs(j, where);
  // Kept since the routes (issue #41): a file without them has none.
  if (j.contains("sending_jobs")) {
    r.sending_jobs = decode_job_labels(j, "sending_jobs", where);
  }
  return r;
}

HistoryJob decode_job(const json& j, const std::string& where, std::size_t switches) {
  HistoryJob h;
  h.id = count(j, "id", where);
  h.name = text(j, "name", where);
  h.user = text(j, "user", where);
  h.stall_max = number(j, "stall_max", where);
  for (const json& s : array_field(j, "switches", where, kMaxSwitches)) {
    if (!s.is_number_unsigned() || s.get<std::uint64_t>() >= switches) {
      throw BadField(where + ".switches: not a switch of its table");
    }
    h.switches.push_back(s.get<std::uint32_t>());
  }
  return h;
}

std::optional<double> ber(const json& j, const char* key, const std::string& where) {
  const json& v = field(j, key, where);
  if (v.is_null()) return std::nullopt;
  const double b = number(j, key, where);
  if (!(b >= 0 && b <= 1)) throw BadField(where + "." + key + ": not a BER");
  return b;
}

PageLink decode_link(const json& j, const std::string& where) {
  PageLink l;
  l.node.guid = guid(j, "node_guid", where);
  l.node.name = text(j, "node_name", where);
  l.node.port = static_cast<int>(count(j, "port", where, 255));
  l.node.read = true;  // the end whose counters showed the condition
  l.remote.guid = guid(j, "remote_node_guid", where);
  l.remote.name = text(j, "remote_node_name", where);
  l.remote.port = static_cast<int>(count(j, "remote_port", where, 255));
  l.remote.read = flag(j, "remote_read", where);
  l.condition = text(j, "condition", where);
  l.symbol_ber = ber(j, "symbol_ber", where);
  l.symbol_ber_at_least = flag(j, "symbol_ber_at_least", where);
  l.remote_symbol_ber = ber(j, "remote_symbol_ber", where);
  l.downs_last_hour =
      static_cast<std::uint32_t>(count(j, "downs_last_hour", where, kHistoryMaxDownsLastHour));
  l.since = number(j, "since", where);
  // Absent in the files of daemons before the links kept their jobs.
  if (j.contains("jobs")) l.jobs = decode_jobs(j, where);
  return l;
}

HistoryFramePtr decode_frame(const json& j, const std::string& where,
                             const std::vector<std::shared_ptr<const HistorySwitchTable>>& tables) {
  auto f = std::make_shared<HistoryFrame>();
  f->time = number(j, "time", where);
  f->span = number(j, "span", where);
  if (!std::isfinite(f->time) || !std::isfinite(f->span) || f->span < 0) {
    throw BadField(where + ": time or span out of range");
  }
  f->sweeps = static_cast<std::uint32_t>(count(j, "sweeps", where, UINT32_MAX));
  const std::size_t table = count(j, "table", where, tables.size() - 1);
  f->table = tables[table];
  const json& cells = field(j, "cells", where);
  if (!cells.is_binary()) throw BadField(where + ".cells: not bytes");
  const auto& bytes = cells.get_binary();
  if (bytes.size() != f->table->switches.size() * kCellBytes) {
    throw BadField(where + ".cells: " + std::to_string(bytes.size()) + " bytes for " +
                   std::to_string(f->table->switches.size()) + " switches");
  }
  f->cells.resize(f->table->switches.size());
  for (std::size_t i = 0; i < f->cells.size(); ++i) {
    const std::uint8_t* b = bytes.data() + i * kCellBytes;
    f->cells[i] = HistoryCell{static_cast<std::uint16_t>(b[0] | (b[1] << 8)),
                              static_cast<std::uint16_t>(b[2] | (b[3] << 8)), b[4], b[5]};
  }
  const json& roots = array_field(j, "roots", where, kHistoryMaxRoots);
  for (std::size_t i = 0; i < roots.size(); ++i) {
    f->roots.push_back(decode_root(roots[i], where + ".roots[" + std::to_string(i) + "]"));
  }
  const json& jobs = array_field(j, "jobs", where, kHistoryMaxJobs);
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    f->jobs.push_back(
        decode_job(jobs[i], where + ".jobs[" + std::to_string(i) + "]", f->table->switches.size()));
  }
  // Frames saved before the history kept link conditions have none.
  if (j.contains("links")) {
    const json& links = array_field(j, "links", where, kHistoryMaxLinks);
    for (std::size_t i = 0; i < links.size(); ++i) {
      f->links.push_back(decode_link(links[i], where + ".links[" + std::to_string(i) + "]"));
    }
    f->links_total = static_cast<std::uint32_t>(count(j, "links_total", where, UINT32_MAX));
  }
  const json& s = field(j, "sweep", where);
  const std::string w = where + ".sweep";
  f->sweep.duration_seconds = number(s, "duration_seconds", w);
  f->sweep.interval_seconds = number(s, "interval_seconds", w);
  f->sweep.completed = flag(s, "completed", w);
  f->sweep.scored = flag(s, "scored", w);
  f->sweep.nodes = count(s, "nodes", w, UINT32_MAX);
  f->sweep.nodes_swept = count(s, "nodes_swept", w, UINT32_MAX);
  f->sweep.nodes_answering = count(s, "nodes_answering", w, UINT32_MAX);
  f->sweep.ports = count(s, "ports", w, UINT32_MAX);
  f->sweep.ports_read = count(s, "ports_read", w, UINT32_MAX);
  return f;
}

}  // namespace

std::string encode_history_state(const HistoryFrames& history, double saved_at) {
  json j;
  j["format"] = std::string(kHistoryStateFormat);
  j["version"] = kHistoryStateVersion;
  j["saved_at"] = saved_at;
  std::map<const HistorySwitchTable*, std::size_t> index;
  json tables = json::array();
  json frames = json::array();
  for (const HistoryFramePtr& f : history.frames) {
    const auto [it, inserted] = index.try_emplace(f->table.get(), index.size());
    if (inserted) tables.push_back(table_json(*f->table));
    frames.push_back(frame_json(*f, it->second));
  }
  j["tables"] = std::move(tables);
  j["frames"] = std::move(frames);
  const std::vector<std::uint8_t> bytes = json::to_cbor(j);
  return std::string(bytes.begin(), bytes.end());
}

bool decode_history_state(std::string_view bytes, std::vector<HistoryFramePtr>& frames,
                          std::string& error) {
  frames.clear();
  const json j = json::from_cbor(bytes.begin(), bytes.end(), true, false);
  if (j.is_discarded()) {
    error = "not CBOR (truncated or corrupt)";
    return false;
  }
  std::vector<HistoryFramePtr> out;
  const bool ok = json_fields::decode_versioned(
      j, kHistoryStateFormat, kHistoryStateVersion, "history state", error,
      [&out](const json& doc) {
        std::vector<std::shared_ptr<const HistorySwitchTable>> tables;
        const json& t = array_field(doc, "tables", "", kMaxFrames);
        for (std::size_t i = 0; i < t.size(); ++i) {
          tables.push_back(decode_table(t[i], "tables[" + std::to_string(i) + "]"));
        }
        const json& f = array_field(doc, "frames", "", kMaxFrames);
        if (!f.empty() && tables.empty()) throw BadField("tables: empty");
        double last = -INFINITY;
        for (std::size_t i = 0; i < f.size(); ++i) {
          const std::string where = "frames[" + std::to_string(i) + "]";
          out.push_back(decode_frame(f[i], where, tables));
          if (out.back()->time <= last) {
            throw BadField(where + ".time: not after the frame before");
          }
          last = out.back()->time;
        }
      });
  if (ok) frames = std::move(out);
  return ok;
}

}  // namespace ibfx
