// /status.json of the daemon under test and its unhealthy links (issue #34,
// docs/links.md), for the tests that say which cables link health must find
// on ibsim, and that it finds nothing else.
#pragma once

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "daemon_fixture.h"

namespace ibfx::test {

inline nlohmann::json status_json(Daemon& daemon) {
  const HttpReply r = http_get(daemon.port(), "/status.json");
  REQUIRE(r.status == 200);
  return nlohmann::json::parse(r.body);
}

// A name or null, as /status.json spells an end it cannot name.
inline std::string json_text(const nlohmann::json& j) {
  return j.is_string() ? j.get<std::string>() : j.dump();
}

// "<condition> <node>[<port>] <- <remote>[<remote port>]": one link of
// links[], the receiving end first (for a one-direction condition, `node`
// is the end whose receiver sees the errors).
inline std::string link_row(const nlohmann::json& link) {
  return json_text(link["condition"]) + " " + json_text(link["node_name"]) + "[" +
         link["port"].dump() + "] <- " + json_text(link["remote_node_name"]) + "[" +
         link["remote_port"].dump() + "]";
}

// Every link of links[], one row a line: "" on a fabric whose cables are all
// healthy, which is what a scenario without a cable fault must show.
inline std::string link_rows(const nlohmann::json& status) {
  std::string out;
  for (const auto& link : status["links"]) out += link_row(link) + "\n";
  return out;
}

}  // namespace ibfx::test
