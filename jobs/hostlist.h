// Slurm hostlist expressions ("g[00000-00003,00007],h01"): the form in which
// Slurm names a job's nodes (the `nodes` field of squeue --json and of
// slurmrestd's job records). Pure parsing, no Slurm library.
//
// The grammar is the one Slurm 22.05's own parser accepts (checked against
// `scontrol show hostnames`):
// - hosts are separated by ',' or white space outside brackets; empty
//   entries (",a", "a,,b") are skipped;
// - a host is literal text and bracketed range lists, expanded as a
//   cartesian product left to right: "r[1-2]n[01-02]" is r1n01 r1n02 r2n01
//   r2n02; literal text between brackets is allowed ("a[1-2]-ib[1]"), text
//   after the last ']' is not ("a[1-3]b" is an error in Slurm too);
// - a range list is ranges "N" or "N-M" (N <= M) separated by ','; the
//   digits of N give the zero padding ("[08-10]": a08 a09 a10; "[1-02]":
//   a1 a2); order and duplicates are kept ("[2,1,2]");
// - one range holds at most 65,536 hosts, like Slurm's MAX_RANGE.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ibfx {

// Slurm refuses one range of more hosts than this (hostlist.c MAX_RANGE).
inline constexpr std::size_t kHostlistMaxRange = 65536;

struct HostlistExpansion {
  std::vector<std::string> hosts;  // in the expression's order
  std::string error;               // empty: parsed; else what is wrong (text quoted, escaped)
  bool ok() const { return error.empty(); }
};

// Expands `expression` into at most `max_hosts` names (more is an error, so
// a hostile or corrupt expression cannot exhaust memory).
HostlistExpansion expand_hostlist(std::string_view expression, std::size_t max_hosts);

}  // namespace ibfx
