// judge_receipt (receipt_tracker.h): the verdict and the one line of a
// finished receipt; the rule is docs/receipts.md's "The verdict".
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string>

#include "base/slurm_node.h"
#include "receipts/receipt_tracker.h"

namespace ibfx {

namespace {

// A run this much not observed (a restart, a job source outage) is said.
constexpr double kMissedWorthSaying = 0.1;

// "11 %", "0.4 %": whole percents, one decimal below 10.
std::string percent(double share) {
  const double p = 100 * std::max(0.0, share);
  std::array<char, 32> buf{};
  std::snprintf(buf.data(), buf.size(), p < 9.95 ? "%.1f %%" : "%.0f %%", p);
  return buf.data();
}

std::string times(std::uint32_t n) {
  if (n == 1) return "once";
  if (n == 2) return "twice";
  return std::to_string(n) + " times";
}

bool alarming(const ReceiptLinkIssue& l) { return link_condition_alarms(l.condition); }

// "mlx5_3 on gpu0413 flapped twice": the worst link issue, in words.
std::string link_phrase(const ReceiptLinkIssue& l) {
  std::string what;
  switch (l.condition) {
    case LinkCondition::kFlapping:
      what = "flapped " + times(std::max<std::uint32_t>(l.downs, 1));
      break;
    case LinkCondition::kDown:
      what = l.downs > 0 ? "went down " + times(l.downs) : "was down";
      break;
    case LinkCondition::kBerError:
      what = "had a bit error rate over the error threshold";
      break;
    case LinkCondition::kBerWarning:
      what = "had a bit error rate over the warning threshold";
      break;
    case LinkCondition::kLinkErrors:
      what = "had link errors";
      break;
    case LinkCondition::kDegraded:
      what = "ran degraded (below its width or speed)";
      break;
    case LinkCondition::kLengthOutlier:
    case LinkCondition::kNone:
      what = "had " + std::string(link_condition_name(l.condition));
      break;
  }
  return safe_node_word(l.port.device) + " on " + safe_node_word(l.port.host) + " " + what;
}

// The alarming link issues of a receipt, and the worst of them.
struct AlarmingLinks {
  const ReceiptLinkIssue* worst = nullptr;
  std::size_t count = 0;
};

AlarmingLinks alarming_links(const JobReceipt& r) {
  AlarmingLinks out;
  for (const ReceiptLinkIssue& l : r.links) {
    if (!alarming(l)) continue;
    ++out.count;
    if (out.worst == nullptr || l.condition > out.worst->condition) out.worst = &l;
  }
  return out;
}

// The stall seconds no job is blamed for: no sender identified, or in no
// tree.
double blamed_elsewhere(const JobReceipt& r) {
  return r.unattributed_stall_seconds + r.outside_trees_stall_seconds;
}

// docs/receipts.md, "The verdict": clean below the clean stall ratio (a
// link fault if a link alarmed), else whoever holds the most stall.
ReceiptVerdict verdict_of(const JobReceipt& r, const ReceiptsConfig& config, std::size_t alarming) {
  const double ratio = r.stall_ratio();
  const double elsewhere = blamed_elsewhere(r);
  if (r.port_seconds <= 0) return ReceiptVerdict::kNoData;
  if (ratio < config.clean_stall_ratio) {
    return alarming > 0 ? ReceiptVerdict::kLinkFault : ReceiptVerdict::kClean;
  }
  if (r.other_jobs_stall_seconds >= r.self_stall_seconds &&
      r.other_jobs_stall_seconds >= elsewhere && r.other_jobs_stall_seconds > 0) {
    return ReceiptVerdict::kOtherJobs;
  }
  if (r.self_stall_seconds >= elsewhere && r.self_stall_seconds > 0) {
    return ReceiptVerdict::kSelfInflicted;
  }
  return ReceiptVerdict::kUnattributed;
}

// " by jobs 4711, 4712 and others": the culprits worth naming.
std::string culprits_phrase(const JobReceipt& r, const ReceiptsConfig& config) {
  // The split weighs every sender by its bytes, so a job whose hosts
  // moved next to nothing (management traffic) is a culprit of a few
  // nanoseconds: named beside the one that fed the tree, it would be
  // blamed too. A second culprit, and "others", are named only when
  // their part alone would make a receipt unclean.
  const double named_floor = config.clean_stall_ratio * r.port_seconds;
  std::size_t named = std::min<std::size_t>(r.culprits.size(), 1);
  if (r.culprits.size() > 1 && r.culprits[1].stall_seconds >= named_floor) named = 2;
  double unnamed = r.other_jobs_stall_seconds;
  for (std::size_t i = 0; i < named; ++i) unnamed -= r.culprits[i].stall_seconds;
  std::string line;
  if (named > 1) line += "s";
  for (std::size_t i = 0; i < named; ++i) {
    line += (i == 0 ? " " : ", ") + std::to_string(r.culprits[i].job_id);
  }
  if (r.culprits.size() > named && unnamed >= named_floor) line += " and others";
  return line;
}

// What the verdict rests on: the share of port-time stalled, and whose.
std::string verdict_phrase(const JobReceipt& r, const ReceiptsConfig& config) {
  const double ratio = r.stall_ratio();
  switch (r.verdict) {
    case ReceiptVerdict::kNoData:
      return "no data (no HCA port of the job was measured)";
    case ReceiptVerdict::kClean:
      return "clean";
    case ReceiptVerdict::kLinkFault:
      return percent(ratio) + " of port-time stalled";
    case ReceiptVerdict::kOtherJobs:
      return percent(ratio) + " of port-time stalled, " +
             percent(r.other_jobs_stall_seconds / r.port_seconds) + " in trees fed by job" +
             culprits_phrase(r, config);
    case ReceiptVerdict::kSelfInflicted:
      return percent(ratio) + " of port-time stalled, " +
             percent(r.self_stall_seconds / r.port_seconds) +
             " in trees its own hosts fed (self-inflicted)";
    case ReceiptVerdict::kUnattributed:
      return percent(ratio) + " of port-time stalled, " +
             percent(blamed_elsewhere(r) / r.port_seconds) + " with no identified sender";
  }
  return "";
}

// What else the line says: the worst alarming link, a run partly not
// observed, an end not known.
void append_caveats(std::string& line, const JobReceipt& r, const AlarmingLinks& links) {
  if (links.worst != nullptr) {
    line += "; " + link_phrase(*links.worst);
    if (links.count > 1) line += " (+" + std::to_string(links.count - 1) + " more links)";
  }
  const double duration = r.end - r.start;
  if (r.verdict != ReceiptVerdict::kNoData && duration > 0 &&
      r.missed_seconds / duration >= kMissedWorthSaying) {
    line += "; " + percent(r.missed_seconds / duration) + " of its run not observed";
  }
  if (!r.end_known) line += "; end not known (job source down)";
}

// Printable ASCII only (the parts above are; a name made safe is too),
// and no longer than a comment field is read.
void make_printable(std::string& line) {
  for (char& c : line) {
    if (c < ' ' || c > '~') c = '?';
  }
  if (line.size() > kReceiptLineMax) line.resize(kReceiptLineMax);
}

}  // namespace

void judge_receipt(JobReceipt& r, const ReceiptsConfig& config) {
  const AlarmingLinks links = alarming_links(r);
  r.verdict = verdict_of(r, config, links.count);
  std::string line = "network: " + verdict_phrase(r, config);
  append_caveats(line, r, links);
  make_printable(line);
  r.line = std::move(line);
}

}  // namespace ibfx
