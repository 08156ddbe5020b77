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

}  // namespace ibfx
