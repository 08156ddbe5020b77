// The status page's history on disk (docs/operations.md, "State
// directory"): every frame of a HistoryRing, in CBOR (the JSON data model,
// binary: a switch's cells are 6 raw bytes, so 24 h of a 98k-port fabric is
// a few MB, not the tens a JSON text would be). Versioned: a file of
// another format or version is refused as a whole, never half read.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "history/history_frame.h"

namespace ibfx {

// Version 1: {"format": "ibfabric_exporter history", "version": 1,
// "saved_at", "tables": [{"guids", "names", "tiers", "rails", "units"}],
// "frames": [{"time", "span", "sweeps", "table", "cells" (binary, 6 bytes a
// switch, little-endian W, U, port, flags), "roots", "jobs", "sweep"}]}.
inline constexpr int kHistoryStateVersion = 1;
inline constexpr std::string_view kHistoryStateFormat = "ibfabric_exporter history";

std::string encode_history_state(const HistoryFrames& history, double saved_at);
// False with `error` ("not CBOR (truncated or corrupt)", "version 7, this
// daemon reads version 1", "frames[3].cells: 12 bytes for 4 switches") for
// anything but a complete, valid file: `frames` is then empty. Never throws.
bool decode_history_state(std::string_view bytes, std::vector<HistoryFramePtr>& frames,
                          std::string& error);

}  // namespace ibfx
