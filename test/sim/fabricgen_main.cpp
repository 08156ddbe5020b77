// ibfx-fabricgen: writes ibsim net files for the demo, the benchmarks and
// manual experiments. See test/sim/fabric_gen.h for the topologies.
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "test/sim/cli_args.h"
#include "test/sim/fabric_gen.h"
#include "test/sim/fat_tree_flags.h"

namespace {

constexpr const char* kUsage =
    "usage: ibfx-fabricgen [--topology fattree|ring|single|irregular] [--preset 16k]\n"
    "                      [--servers N] [--rails R] [--tiers 2|3] [--radix K] [--storage N]\n"
    "                      [--switches N] [--remove-links N] [--no-miscable] [--seed S]\n"
    "                      [--link 4xHDR|none]\n"
    "                      [--out FILE] [--print-sizes] [--summary]\n"
    "\n"
    "Generates an ibsim net file. Without --out and --print-sizes the file goes to\n"
    "stdout. --print-sizes prints the ibsim table sizes the fabric needs\n"
    "(e.g. \"-N 123 -S 45 -P 6789\") on stdout; --summary prints node counts.\n"
    "  --topology   fattree (default), ring (--switches switches in a ring),\n"
    "               single (one switch), irregular (fat tree with --remove-links\n"
    "               missing switch links and one miscabled HCA, chosen by --seed)\n"
    "  --preset 16k 2048 servers x 8 rails, 3 tiers, radix 64 (later options override)\n"
    "  --link       link width/speed annotated on every port (default 4xHDR)\n";

using ibfx::test::UsageError;

struct Options {
  std::string topology = "fattree";
  ibfx::test::FatTreeSpec fat_tree;
  int switches = 4;
  int remove_links = 2;
  bool miscable = true;
  std::uint64_t seed = 1;
  std::string link_type = "4xHDR";
  std::string out;
  bool print_sizes = false;
  bool summary = false;
};

std::optional<Options> parse_args(int argc, char** argv) {
  Options options;
  ibfx::test::ArgReader args(argc, argv);
  auto int_value = [&](long long min, long long max) {
    return static_cast<int>(args.integer(min, max));
  };
  while (args.next()) {
    if (args.is("--help") || args.is("-h")) {
      std::cout << kUsage;
      return std::nullopt;
    } else if (args.is("--topology")) {
      options.topology = args.value();
      if (options.topology != "fattree" && options.topology != "ring" &&
          options.topology != "single" && options.topology != "irregular") {
        throw UsageError("--topology: unknown topology \"" + options.topology + "\"");
      }
    } else if (args.is("--preset")) {
      const std::string preset = args.value();
      if (preset != "16k") throw UsageError("--preset: unknown preset \"" + preset + "\"");
      options.fat_tree = ibfx::test::preset_16k();
    } else if (ibfx::test::read_fat_tree_flag(args, options.fat_tree)) {
      continue;
    } else if (args.is("--switches")) {
      options.switches = int_value(1, 1 << 16);
    } else if (args.is("--remove-links")) {
      options.remove_links = int_value(0, 1 << 20);
    } else if (args.is("--no-miscable")) {
      args.no_value();
      options.miscable = false;
    } else if (args.is("--seed")) {
      options.seed = static_cast<std::uint64_t>(args.integer(0, INT64_MAX));
    } else if (args.is("--link")) {
      options.link_type = args.value();
      if (options.link_type == "none") options.link_type.clear();
      if (!options.link_type.empty() && !ibfx::test::valid_link_type(options.link_type)) {
        throw UsageError("--link: invalid link type \"" + options.link_type + "\" (e.g. 4xHDR)");
      }
    } else if (args.is("--out") || args.is("-o")) {
      options.out = args.value();
      if (options.out.empty()) throw UsageError("--out: empty file name");
    } else if (args.is("--print-sizes")) {
      args.no_value();
      options.print_sizes = true;
    } else if (args.is("--summary")) {
      args.no_value();
      options.summary = true;
    } else {
      args.unknown();
    }
  }
  // Caught here rather than by the generator so the message names the option.
  if ((options.topology == "fattree" || options.topology == "irregular") &&
      options.fat_tree.radix % 2 != 0) {
    throw UsageError("--radix must be even for a fat tree (got " +
                     std::to_string(options.fat_tree.radix) + ")");
  }
  return options;
}

ibfx::test::Fabric generate(const Options& options) {
  using namespace ibfx::test;
  const FatTreeSpec& ft = options.fat_tree;
  if (options.topology == "ring") {
    RingSpec spec;
    spec.switches = options.switches;
    spec.servers = ft.servers;
    spec.rails = ft.rails;
    spec.radix = ft.radix;
    return make_ring(spec);
  }
  if (options.topology == "single") {
    SingleSwitchSpec spec;
    spec.servers = ft.servers;
    spec.rails = ft.rails;
    spec.radix = ft.radix;
    return make_single_switch(spec);
  }
  if (options.topology == "irregular") {
    IrregularSpec spec;
    spec.base = ft;
    spec.removed_links = options.remove_links;
    spec.miscable = options.miscable;
    spec.seed = options.seed;
    return make_irregular(spec);
  }
  return make_fat_tree(ft);
}

void print_summary(const ibfx::test::Fabric& fabric) {
  using ibfx::test::NodeRole;
  std::map<std::string, std::size_t> by_role;
  for (const auto& node : fabric.nodes()) ++by_role[ibfx::test::to_string(node.role)];
  std::cout << "nodes " << fabric.nodes().size() << " switches " << fabric.switch_count()
            << " hcas " << fabric.hca_count() << " links " << fabric.link_count() << " ports "
            << fabric.port_count() << "\n";
  for (const auto& [role, count] : by_role) std::cout << "  " << role << " " << count << "\n";
  if (!fabric.miscabled_hca.empty()) std::cout << "miscabled \"" << fabric.miscabled_hca << "\"\n";
  for (const auto& [a, b] : fabric.removed_links) {
    std::cout << "removed \"" << a.node << "\"[" << a.port << "] - \"" << b.node << "\"[" << b.port
              << "]\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::optional<Options> options;
  try {
    options = parse_args(argc, argv);
    if (!options) return 0;
  } catch (const UsageError& e) {
    std::cerr << "ibfx-fabricgen: error: " << e.what() << "\n" << kUsage;
    return 2;
  }
  try {
    ibfx::test::Fabric fabric = generate(*options);
    fabric.link_type = options->link_type;
    if (!options->out.empty()) fabric.write_netfile(options->out);
    if (options->print_sizes) std::cout << fabric.sizes().flags() << "\n";
    if (options->summary) print_summary(fabric);
    if (options->out.empty() && !options->print_sizes && !options->summary) {
      std::cout << fabric.to_netfile();
    }
    std::cout.flush();
    if (!std::cout) {
      std::cerr << "ibfx-fabricgen: error: cannot write to stdout\n";
      return 1;
    }
  } catch (const std::invalid_argument& e) {
    // An impossible spec is a usage error too.
    std::cerr << "ibfx-fabricgen: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "ibfx-fabricgen: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
