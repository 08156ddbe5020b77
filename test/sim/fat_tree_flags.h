// The fat-tree shape flags shared by ibfx-fabricgen and the benchmarks:
// --servers, --rails, --tiers, --radix, --storage, with the same ranges and
// errors everywhere.
#pragma once

#include "test/sim/cli_args.h"
#include "test/sim/fabric_gen.h"

namespace ibfx::test {

// Applies the current option to `spec` if it is one of the shape flags;
// false (nothing read) otherwise. Throws UsageError on a bad value.
inline bool read_fat_tree_flag(ArgReader& args, FatTreeSpec& spec) {
  const auto number = [&args](long long min, long long max) {
    return static_cast<int>(args.integer(min, max));
  };
  if (args.is("--servers")) {
    spec.servers = number(1, 1 << 20);
  } else if (args.is("--rails")) {
    spec.rails = number(1, 64);
  } else if (args.is("--tiers")) {
    spec.tiers = number(2, 3);
  } else if (args.is("--radix")) {
    spec.radix = number(1, 255);
  } else if (args.is("--storage")) {
    spec.storage_nodes = number(0, 1 << 20);
  } else {
    return false;
  }
  return true;
}

}  // namespace ibfx::test
