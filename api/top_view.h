// /top: the plain-text view an operator curls at 2 AM. From the last
// snapshot only (no MAD): the roots of congestion and their victims, the
// hottest ports with W, U and the far end of the cable, and the nodes that
// did not answer.
#pragma once

#include <cstddef>
#include <string>

namespace ibfx {

struct Snapshot;

inline constexpr std::size_t kTopDefaultRows = 10;
inline constexpr std::size_t kTopMaxRows = 1000;

// At most `rows` lines per table.
std::string render_top(const Snapshot& snapshot, std::size_t rows);

}  // namespace ibfx
