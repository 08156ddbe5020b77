// Golden files (node_exporter's collector fixtures): a renderer's output
// for a fixed input, compared byte for byte with test/data/golden/<file>.
// After an intended change, regenerate with IBFX_UPDATE_GOLDEN=1
// build/release/test/unit_tests "[golden]" and review the diff.
#pragma once

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace ibfx::test {

inline std::string golden_path(const std::string& file) {
  return IBFX_SOURCE_DIR "/test/data/golden/" + file;
}

// The golden file `file` (its name in test/data/golden/, with its
// extension), as stored.
inline std::string golden_text(const std::string& file) {
  std::ifstream in(golden_path(file), std::ios::binary);
  REQUIRE(in.good());
  std::stringstream golden;
  golden << in.rdbuf();
  return golden.str();
}

inline void check_golden(const std::string& file, const std::string& text) {
  const char* update = std::getenv("IBFX_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(golden_path(file), std::ios::binary) << text;
  }
  INFO(golden_path(file) << " (IBFX_UPDATE_GOLDEN=1 regenerates it)");
  CHECK(text == golden_text(file));
}

}  // namespace ibfx::test
