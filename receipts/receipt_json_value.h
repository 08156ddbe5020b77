// A receipt as a JSON value: what receipt_json.h prints and parses, and
// what the tracker's saved state embeds for each running job (one
// spelling of every field, written once).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "receipts/job_receipt.h"

namespace ibfx {

// The version every receipt carries ("version"); a reader refuses others.
inline constexpr int kReceiptJsonVersion = 1;

nlohmann::json receipt_json_value(const JobReceipt& receipt);
nlohmann::json receipt_port_json(const ReceiptPort& port);
// False, `error` set, for a value that is not a receipt of kReceiptJsonVersion.
bool receipt_from_json_value(const nlohmann::json& value, JobReceipt& out, std::string& error);

}  // namespace ibfx
