// A receipt as JSON: the one form /jobs/<id> serves and receipts.jsonl
// keeps (the file adds nothing to it), and the one-receipt text form of
// /jobs/<id>?format=text. Names in it are untrusted: JSON escapes them;
// the text form makes them safe for a terminal.
#pragma once

#include <string>

#include "receipts/job_receipt.h"

namespace ibfx {

std::string receipt_to_json(const JobReceipt& receipt);
// False for anything that is not a receipt this version wrote; `error` says why.
bool receipt_from_json(const std::string& text, JobReceipt& out, std::string& error);
std::string receipt_to_text(const JobReceipt& receipt);

}  // namespace ibfx
