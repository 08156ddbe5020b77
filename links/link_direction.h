// The health of one direction of a cable, judged at its receiver (issue
// #34): errors counted at port B's receiver are the A->B direction's. Keeps
// the direction's BerWindow and the BER condition it holds (hysteresis).
#pragma once

#include "analysis/link_condition.h"
#include "links/ber_window.h"

namespace ibfx {

struct DirectionVerdict {
  LinkCondition ber = LinkCondition::kNone;  // kNone, kBerWarning or kBerError
  bool link_errors = false;
  // Symbol BER of the short window, else of the long one; < 0 when neither
  // saw a symbol error (or the link rate is unknown).
  double symbol_ber = -1;
  // The SymbolErrorCounter sits at the maximum of its field (16 bits in
  // PortCounters): errors past it are not counted, the BER is at least this.
  bool at_least = false;
  LinkErrorCounts long_window;  // the errors of the long window
  LinkCondition worst() const {
    return link_errors ? ibfx::worst(ber, LinkCondition::kLinkErrors) : ber;
  }
};

class LinkDirection {
 public:
  explicit LinkDirection(const LinkHealthConfig& config) : window_(config.long_window_seconds) {}

  // Errors counted at the receiver since its last reading, seen at `now`.
  void add(double now, const LinkErrorCounts& delta) { window_.add(now, delta); }

  // The verdict at `now`. `bits_per_second`: the link's line rate (active
  // lanes x lane rate, IBA 7.2 / the spec's per-lane data rates); 0 when
  // unknown (no BER). `watched_seconds`: how long the receiver has been
  // read, so that a window not yet full is not diluted by time nobody
  // watched. `saturated`: the SymbolErrorCounter sits at its maximum.
  DirectionVerdict evaluate(double now, double bits_per_second, double watched_seconds,
                            bool saturated, const LinkHealthConfig& config);

  // Nothing left to remember: no errors in the long window, nothing held.
  bool idle(double now) const { return held_ == LinkCondition::kNone && window_.empty(now); }

 private:
  BerWindow window_;
  LinkCondition held_ = LinkCondition::kNone;
};

}  // namespace ibfx
