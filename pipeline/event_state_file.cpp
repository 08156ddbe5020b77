#include "pipeline/event_state_file.h"

#include <utility>

#include "analysis/congestion_event_state.h"
#include "base/log.h"

namespace ibfx {

EventStateFile::EventStateFile(std::string directory)
    : file_(std::move(directory), "events.json", "congestion events", kMinWriteInterval,
            "ibfx-state") {}

EventStateFile::~EventStateFile() { stop(); }

std::optional<EventTrackerState> EventStateFile::load() {
  const std::optional<std::string> text = file_.read();
  if (!text) return std::nullopt;
  EventTrackerState state;
  std::string error;
  if (!decode_event_state(*text, state, error)) {
    file_.set_aside(error);
    return std::nullopt;
  }
  log_info("restored " + std::to_string(state.events.size()) + " congestion events from " +
           file_.path());
  return state;
}

void EventStateFile::save(EventTrackerState state, double saved_at) {
  file_.save([state = std::move(state), saved_at] { return encode_event_state(state, saved_at); });
}

void EventStateFile::stop() { file_.stop(); }

std::uint64_t EventStateFile::writes() const { return file_.writes(); }

std::uint64_t EventStateFile::failures() const { return file_.failures(); }

}  // namespace ibfx
