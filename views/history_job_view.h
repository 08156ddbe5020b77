// A Slurm job's view (/?job=ID, issue #35): the operator's question "job
// 4711 has run 30 % slower since last night: is it the network, and
// where?". From the history: the job's worst stall ratio over its lifetime
// (a sparkline, its peak and when), the roots of congestion whose trees
// held its ports (cause, peak score, first and last seen, a link to the
// page as it was then), the link conditions on its ports (each with when
// it was first and last seen), and its leaves on the heatmap over time. Rendered
// per request.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "history/history_frame.h"
#include "receipts/job_receipt.h"

namespace ibfx {

// A job as the page lists it ("4711 train (alice)", untrusted), linked to
// its view when it starts with a job id; escaped either way.
void append_job_link(std::string& out, std::string_view job);

// The page, or an empty string when the history never saw the job and no
// receipt is given. A job that ended with a receipt (issue #44) shows it
// first, then what the history kept of it; `history` may be null.
std::string render_job_html(const std::shared_ptr<const HistoryFrames>& history, std::uint64_t job,
                            std::string_view telemetry_path, const JobReceipt* receipt = nullptr);

}  // namespace ibfx
