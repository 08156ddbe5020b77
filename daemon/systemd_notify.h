// The sd_notify(3) protocol spoken directly (one datagram to $NOTIFY_SOCKET),
// so the daemon needs no libsystemd. Every call is a no-op when the daemon was
// not started by systemd with Type=notify (NOTIFY_SOCKET unset), and errors
// are swallowed: a lost notification must never take the exporter down.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace ibfx {

// "READY=1": once the HTTP listener serves (not after the first sweep, which
// on a large fabric takes minutes: `systemctl start` and `apt install` wait
// for READY); /-/ready says when the first sweep is in.
void notify_ready();
// "STATUS=<text>": shown by `systemctl status` (e.g. the last sweep summary).
// Newlines are replaced, since the protocol is newline-separated.
void notify_status(std::string_view text);
// "WATCHDOG=1": call at least every watchdog_interval()/2.
void notify_watchdog();
// "RELOADING=1" (with MONOTONIC_USEC, which systemd >= 253 requires for
// Type=notify-reload); follow with notify_ready() when the reload is done.
void notify_reloading();
// "STOPPING=1": shutdown has begun.
void notify_stopping();

// The watchdog period from WATCHDOG_USEC, when the watchdog is enabled for
// this process (WATCHDOG_PID unset or equal to getpid()); nullopt otherwise.
std::optional<std::chrono::microseconds> watchdog_interval();

// Sends `state` verbatim ("KEY=value\n..."); true when it was delivered. The
// functions above use it; exposed for tests and unusual states.
bool notify_raw(std::string_view state);

}  // namespace ibfx
