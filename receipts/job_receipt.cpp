#include "receipts/job_receipt.h"

#include <array>

namespace ibfx {

namespace {
constexpr std::array<std::string_view, kReceiptVerdictCount> kVerdictNames{
    "clean", "self_inflicted", "other_jobs", "unattributed", "link_fault", "no_data"};
}  // namespace

std::string_view receipt_verdict_name(ReceiptVerdict v) {
  return kVerdictNames[static_cast<std::size_t>(v)];
}

bool parse_receipt_verdict(std::string_view name, ReceiptVerdict& out) {
  for (std::size_t i = 0; i < kVerdictNames.size(); ++i) {
    if (kVerdictNames[i] == name) {
      out = static_cast<ReceiptVerdict>(i);
      return true;
    }
  }
  return false;
}

std::string_view cross_spine_basis_name(CrossSpineBasis b) {
  switch (b) {
    case CrossSpineBasis::kRoutes:
      return "routes";
    case CrossSpineBasis::kUplinks:
      return "uplinks";
    case CrossSpineBasis::kUnknown:
      break;
  }
  return "unknown";
}

std::size_t receipt_memory_bytes(const JobReceipt& r) {
  std::size_t b =
      sizeof(JobReceipt) + r.name.capacity() + r.user.capacity() + r.partition.capacity() +
      r.line.capacity() + r.hosts.capacity() * sizeof(std::string) +
      r.rails.capacity() * sizeof(ReceiptRail) + r.culprits.capacity() * sizeof(ReceiptCulprit) +
      r.links.capacity() * sizeof(ReceiptLinkIssue) + r.worst_port.host.capacity() +
      r.worst_port.device.capacity();
  // A short string lives in the std::string itself (no heap): capacity()
  // then counts bytes already in sizeof, an overestimate of at most 15 each.
  for (const std::string& h : r.hosts) b += h.capacity();
  for (const ReceiptLinkIssue& l : r.links) b += l.port.host.capacity() + l.port.device.capacity();
  return b;
}

}  // namespace ibfx
