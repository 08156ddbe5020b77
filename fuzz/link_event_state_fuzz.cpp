// libFuzzer target: the link events' state file (link_events.json in the
// state directory, links/link_event_state.h), read at start-up. A file
// from another run, a truncated write or an edited one must be refused or
// restored, never crash the daemon or throw; what is accepted must encode
// back to the same state and restore into a tracker.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "links/link_event_state.h"
#include "links/link_events.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  ibfx::LinkEventTrackerState state;
  std::string error;
  if (!ibfx::decode_link_event_state(text, state, error)) {
    // Refused as a whole: nothing half read.
    if (!state.events.empty() || error.empty()) __builtin_trap();
    return 0;
  }
  // What was accepted is a state the daemon itself could have written.
  ibfx::LinkEventTrackerState again;
  if (!ibfx::decode_link_event_state(ibfx::encode_link_event_state(state, 1e9), again, error) ||
      !(again == state)) {
    __builtin_trap();
  }
  // And restores: the next run serves the events, then a sweep without
  // them after the grace period ends the active ones.
  ibfx::LinkEventTracker tracker;
  tracker.restore(state, 1e9);
  const std::vector<std::string> names;
  tracker.observe(ibfx::LinkHealthReport{}, names,
                  1e9 + ibfx::LinkEventTracker::kRestoredGraceSeconds + 1);
  for (const ibfx::LinkEvent& e : *tracker.events()) {
    if (e.active()) __builtin_trap();
  }
  return 0;
}
