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

}  // namespace

void judge_receipt(JobReceipt& r, const ReceiptsConfig& config) {
  const ReceiptLinkIssue* worst_link = nullptr;
  std::size_t alarming_links = 0;
  for (const ReceiptLinkIssue& l : r.links) {
    if (!alarming(l)) continue;
    ++alarming_links;
    if (worst_link == nullptr || l.condition > worst_link->condition) worst_link = &l;
  }
  const double ratio = r.stall_ratio();
  const double blamed_elsewhere = r.unattributed_stall_seconds + r.outside_trees_stall_seconds;
  if (r.port_seconds <= 0) {
    r.verdict = ReceiptVerdict::kNoData;
  } else if (ratio < config.clean_stall_ratio) {
    r.verdict = alarming_links > 0 ? ReceiptVerdict::kLinkFault : ReceiptVerdict::kClean;
  } else if (r.other_jobs_stall_seconds >= r.self_stall_seconds &&
             r.other_jobs_stall_seconds >= blamed_elsewhere && r.other_jobs_stall_seconds > 0) {
    r.verdict = ReceiptVerdict::kOtherJobs;
  } else if (r.self_stall_seconds >= blamed_elsewhere && r.self_stall_seconds > 0) {
    r.verdict = ReceiptVerdict::kSelfInflicted;
  } else {
    r.verdict = ReceiptVerdict::kUnattributed;
  }

  std::string line = "network: ";
  switch (r.verdict) {
    case ReceiptVerdict::kNoData:
      line += "no data (no HCA port of the job was measured)";
      break;
    case ReceiptVerdict::kClean:
      line += "clean";
      break;
    case ReceiptVerdict::kLinkFault:
      line += percent(ratio) + " of port-time stalled";
      break;
    case ReceiptVerdict::kOtherJobs: {
      line += percent(ratio) + " of port-time stalled, " +
              percent(r.other_jobs_stall_seconds / r.port_seconds) + " in trees fed by job";
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
      if (named > 1) line += "s";
      for (std::size_t i = 0; i < named; ++i) {
        line += (i == 0 ? " " : ", ") + std::to_string(r.culprits[i].job_id);
      }
      if (r.culprits.size() > named && unnamed >= named_floor) line += " and others";
      break;
    }
    case ReceiptVerdict::kSelfInflicted:
      line += percent(ratio) + " of port-time stalled, " +
              percent(r.self_stall_seconds / r.port_seconds) +
              " in trees its own hosts fed (self-inflicted)";
      break;
    case ReceiptVerdict::kUnattributed:
      line += percent(ratio) + " of port-time stalled, " +
              percent(blamed_elsewhere / r.port_seconds) + " with no identified sender";
      break;
  }
  if (worst_link != nullptr) {
    line += "; " + link_phrase(*worst_link);
    if (alarming_links > 1) line += " (+" + std::to_string(alarming_links - 1) + " more links)";
  }
  const double duration = r.end - r.start;
  if (r.verdict != ReceiptVerdict::kNoData && duration > 0 &&
      r.missed_seconds / duration >= kMissedWorthSaying) {
    line += "; " + percent(r.missed_seconds / duration) + " of its run not observed";
  }
  if (!r.end_known) line += "; end not known (job source down)";
  // Printable ASCII only (the parts above are; a name made safe is too),
  // and no longer than a comment field is read.
  for (char& c : line) {
    if (c < ' ' || c > '~') c = '?';
  }
  if (line.size() > kReceiptLineMax) line.resize(kReceiptLineMax);
  r.line = std::move(line);
}

}  // namespace ibfx
