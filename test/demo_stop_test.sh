#!/bin/bash
# tools/demo stops cleanly (issue #45): started for real (ibsim, opensm,
# the scenario's traffic, the daemon) and stopped at different moments of
# its start-up and after it, with SIGTERM to the script alone (a supervisor,
# `kill`), SIGINT to its process group (Ctrl-C) and SIGINT to the script
# alone. Each time: the script exits within 15 s with 143 or 130, no
# process of its session is left (the demo runs in a session of its own,
# so every process it started, and theirs, is in it) and its temp dir is
# gone. Before the fix, SIGTERM killed ibsim before opensm, and opensm,
# waiting on the simulator, ignored SIGTERM: the script waited forever.
#   demo_stop_test.sh SOURCE_DIR BUILD_DIR WORK_DIR [ROUNDS]
# Exits 77 (skipped) without ibsim, opensm or umad2sim.
set -euo pipefail

src=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
work=$3
rounds=${4:-3}
PATH=$PATH:/usr/sbin
for tool in ibsim opensm setsid; do
  command -v "$tool" >/dev/null || { echo "SKIP: no $tool"; exit 77; }
done
[[ -e /usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so ]] || { echo "SKIP: no umad2sim"; exit 77; }

rm -rf "$work"
mkdir -p "$work/tmp"

fail() {
  echo "FAIL: $*" >&2
  [[ -f $work/demo.err ]] && sed 's/^/  demo: /' "$work/demo.err" >&2
  exit 1
}

# Whatever way this script ends, no demo of it is left running.
current=""
trap '[[ -n $current ]] && kill -KILL -- "-$current" 2>/dev/null; true' EXIT

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# The processes left in session $1, one "pid command" a line. A zombie is
# not one: once its parent is gone it is init's to reap (the daemon's MAD
# worker can be one for a moment after the daemon exited).
session_processes() {
  ps -e -o sid=,stat=,pid=,args= | awk -v sid="$1" '$1 == sid && $2 !~ /^Z/ { $1 = $2 = ""; print }'
}

# One start and stop. how: TERM (to the script), INT-group (Ctrl-C), INT
# (to the script). when: "early:SECONDS" after the start, or "up:SECONDS"
# after the demo said its fabric is up.
run_once() {
  local how=$1 when=$2 pid rc=0 start waited port
  : >"$work/demo.err"
  port=$(free_port)  # here, not in the background command: the signal is for the demo
  # setsid: a session (and process group) of its own, led by the demo.
  # env --default-signal=INT: a command started with & by a script ignores
  # SIGINT, and bash cannot trap a signal ignored on entry; from a terminal
  # the demo gets SIGINT's default, as here.
  BUILD_DIR=$build TMPDIR=$work/tmp LISTEN=127.0.0.1:$port IBFX_SYSFS_ROOT=$work/nosys \
    setsid env --default-signal=INT "$src/tools/demo" --log.level=warn >/dev/null \
    2>"$work/demo.err" &
  pid=$!
  current=$pid
  start=$SECONDS
  case $when in
    early:*) sleep "${when#early:}" ;;
    up:*)
      until grep -q 'simulated fabric up' "$work/demo.err"; do
        kill -0 "$pid" 2>/dev/null || fail "$how $when: the demo ended before its fabric was up"
        ((SECONDS - start < 60)) || fail "$how $when: the fabric not up after 60 s"
        sleep 0.1
      done
      sleep "${when#up:}"
      ;;
  esac
  kill -0 "$pid" 2>/dev/null || fail "$how $when: the demo ended before the signal"
  case $how in
    TERM) kill -TERM "$pid" || fail "$how $when: kill" ;;
    INT-group) kill -INT -- "-$pid" || fail "$how $when: kill of its process group" ;;
    INT) kill -INT "$pid" || fail "$how $when: kill" ;;
  esac
  start=$SECONDS
  # The script: gone within 15 s (each process gets 3 s after SIGTERM, the
  # daemon 5 s, before SIGKILL).
  for _ in $(seq 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    echo "left running:" >&2
    session_processes "$pid" >&2
    kill -KILL -- "-$pid" 2>/dev/null || true
    fail "$how $when: tools/demo still running 15 s after SIG${how%-group}"
  fi
  wait "$pid" || rc=$?
  waited=$((SECONDS - start))
  case $how in
    TERM) [[ $rc == 143 ]] || fail "$how $when: exit status $rc, not 143" ;;
    *) [[ $rc == 130 ]] || fail "$how $when: exit status $rc, not 130" ;;
  esac
  local left
  left=$(session_processes "$pid")
  if [[ -n $left ]]; then
    kill -KILL -- "-$pid" 2>/dev/null || true
    fail "$how $when: processes of the demo left after it exited: $left"
  fi
  if [[ -n $(ls -A "$work/tmp") ]]; then
    fail "$how $when: left in TMPDIR: $(ls -A "$work/tmp")"
  fi
  current=""
  echo "ok: SIG$how $when: exit $rc after ${waited} s, nothing left"
}

# Moments: while the simulator starts, while opensm assigns LIDs, and
# after the daemon started (the race of the report: opensm outliving
# SIGTERM, seen once in three).
for ((r = 0; r < rounds; r++)); do
  run_once TERM "up:0.$((r * 3))"
  run_once INT-group "up:0.$((r * 3 + 1))"
  run_once INT "up:1"
done
run_once TERM early:0.3
run_once TERM early:1.5
run_once INT-group early:1
echo "demo stop OK"
