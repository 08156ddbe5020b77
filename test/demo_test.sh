#!/bin/sh
# tools/demo never touches a real fabric unless asked: against a fake sysfs
# (IBFX_SYSFS_ROOT) with and without an HCA, --dry-run says what would run.
#   demo_test.sh SOURCE_DIR WORK_DIR
set -eu

src=$(cd "$1" && pwd)
work=$2
demo=$src/tools/demo

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

rm -rf "$work"
mkdir -p "$work/hca/class/infiniband/mlx5_0/ports/1" "$work/none/class"

# An HCA and no --real-fabric: the simulated fabric, and how to get the real one.
out=$(IBFX_SYSFS_ROOT=$work/hca "$demo" --dry-run 2>&1) || fail "with an HCA: exit $?: $out"
printf '%s' "$out" | grep -q 'HCA (mlx5_0)' || fail "with an HCA: does not name it: $out"
printf '%s' "$out" | grep -q 'SIMULATED fabric' || fail "with an HCA: not the simulated fabric: $out"
printf '%s' "$out" | grep -q -- '--real-fabric' || fail "with an HCA: no word of --real-fabric: $out"
if printf '%s' "$out" | grep -q 'REAL fabric'; then fail "with an HCA: runs on the real fabric unasked: $out"; fi

# --real-fabric: says so, and runs the daemon on it.
out=$(IBFX_SYSFS_ROOT=$work/hca "$demo" --real-fabric --dry-run --log.level=debug 2>&1) ||
  fail "--real-fabric: exit $?: $out"
printf '%s' "$out" | grep -q 'REAL fabric of HCA mlx5_0' || fail "--real-fabric: does not say so: $out"
printf '%s' "$out" | grep -q 'would run: .*ibfabric_exporter --web.listen-address=:9690 --log.level=debug' ||
  fail "--real-fabric: daemon flags not passed on: $out"

# No HCA: the simulated fabric, without a word about a real one.
out=$(IBFX_SYSFS_ROOT=$work/none "$demo" --dry-run 2>&1) || fail "no HCA: exit $?: $out"
printf '%s' "$out" | grep -q 'SIMULATED fabric' || fail "no HCA: not the simulated fabric: $out"

# --real-fabric without an HCA is an error.
if out=$(IBFX_SYSFS_ROOT=$work/none "$demo" --real-fabric --dry-run 2>&1); then
  fail "--real-fabric without an HCA accepted: $out"
fi
printf '%s' "$out" | grep -q 'no InfiniBand HCA' || fail "--real-fabric without an HCA: $out"
echo "demo OK"
