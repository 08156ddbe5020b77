#!/bin/sh
# Debian package checks, one step per ctest test (see test/packaging.cmake):
#   packaging_test.sh STEP BUILD_DIR WORK_DIR
# build         cpack -G DEB into WORK_DIR and unpack it into WORK_DIR/root
# contents      the files the package must ship
# control       Package, Depends (from dpkg-shlibdeps + rdma-core), conffiles, scripts
# check-config  the unpacked binary accepts the packaged default config
# unit          systemd-analyze verify on the packaged unit and an instance of the
#               templated one (skipped without it)
set -eu

step=$1
build=$2
work=$3
root=$work/root

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

deb() {
  set -- "$work"/ibfabric-exporter_*.deb
  [ -f "$1" ] || fail "no .deb in $work (did the build step run?)"
  echo "$1"
}

case $step in
build)
  rm -rf "$work"
  mkdir -p "$work"
  # -B: the package lands in WORK_DIR, not in the build tree's packages/.
  (cd "$build" && cpack -G DEB -B "$work" --config "$build/CPackConfig.cmake") >"$work/cpack.log" 2>&1 ||
    { cat "$work/cpack.log" >&2; fail "cpack failed"; }
  file=$(deb)
  echo "built $file"
  dpkg-deb -x "$file" "$root"
  ;;

contents)
  file=$(deb)
  dpkg-deb -c "$file" | awk '{print $6}' | sed 's|^\./|/|' >"$work/contents.txt"
  for f in \
    /usr/bin/ibfabric_exporter \
    /etc/ibfabric_exporter/ibfabric_exporter.yaml \
    /etc/default/ibfabric-exporter \
    /lib/systemd/system/ibfabric-exporter.service \
    /lib/systemd/system/ibfabric-exporter@.service \
    /lib/udev/rules.d/60-ibfabric-exporter-umad.rules \
    /usr/share/man/man1/ibfabric_exporter.1.gz \
    /usr/share/doc/ibfabric-exporter/README.md \
    /usr/share/doc/ibfabric-exporter/copyright \
    /usr/share/doc/ibfabric-exporter/changelog.Debian.gz \
    /usr/share/ibfabric_exporter/dashboards/ \
    /usr/share/ibfabric_exporter/examples/web-config.yml.example; do
    grep -qx "$f" "$work/contents.txt" || fail "package lacks $f"
  done
  # Nothing under /usr/etc or /usr/local (a relative sysconfdir or the default
  # CMake prefix leaking into the package).
  if grep -E '^/usr/(etc|local)/' "$work/contents.txt"; then fail "files under /usr/etc or /usr/local"; fi
  # The binary is executable, the config is not.
  dpkg-deb -c "$file" | grep -E ' \./usr/bin/ibfabric_exporter$' | grep -q '^-rwxr-xr-x' ||
    fail "/usr/bin/ibfabric_exporter is not 0755"
  # The man page is valid gzip'd troff and names every flag of --help.
  gzip -t "$root/usr/share/man/man1/ibfabric_exporter.1.gz" || fail "man page is not gzip"
  man_text=$(gzip -dc "$root/usr/share/man/man1/ibfabric_exporter.1.gz")
  flags=$("$root/usr/bin/ibfabric_exporter" --help | grep -oE '^ +(-h, )?--[a-z.-]+' | sed 's/.*--//')
  [ -n "$flags" ] || fail "no flags in --help"
  for flag in $flags; do
    printf "%s" "$man_text" | sed "s/\\\\-/-/g" | grep -qF -- "--$flag" || fail "man page lacks --$flag"
  done
  if command -v man >/dev/null 2>&1; then
    MANWIDTH=80 man -l "$root/usr/share/man/man1/ibfabric_exporter.1.gz" >/dev/null 2>"$work/man.err" || fail "man -l failed"
    [ ! -s "$work/man.err" ] || { cat "$work/man.err" >&2; fail "man page warnings"; }
  fi
  echo "contents OK"
  ;;

control)
  file=$(deb)
  field() { dpkg-deb -f "$file" "$1"; }
  [ "$(field Package)" = "ibfabric-exporter" ] || fail "Package: $(field Package)"
  [ "$(field Architecture)" = "$(dpkg --print-architecture)" ] || fail "Architecture: $(field Architecture)"
  [ -n "$(field Version)" ] || fail "no Version"
  maintainer=$(field Maintainer)
  printf '%s' "$maintainer" | grep -Eq '^[^<>]+ <[^@<> ]+@[^@<> ]+\.[a-z]+>$' || fail "Maintainer: '$maintainer'"
  if printf '%s' "$maintainer" | grep -q '@localhost'; then fail "Maintainer: '$maintainer'"; fi
  # The changelog shipped is the package's: same version and maintainer.
  changelog=$root/usr/share/doc/ibfabric-exporter/changelog.Debian.gz
  gzip -dc "$changelog" >"$work/changelog" || fail "no changelog.Debian.gz"
  [ "$(dpkg-parsechangelog -l "$work/changelog" -S Version)" = "$(field Version)" ] ||
    fail "changelog version $(dpkg-parsechangelog -l "$work/changelog" -S Version) != $(field Version)"
  [ "$(dpkg-parsechangelog -l "$work/changelog" -S Maintainer)" = "$maintainer" ] || fail "changelog maintainer"
  # A machine-readable copyright file naming a real licence, whose text is the
  # repository's LICENSE.
  copyright=$root/usr/share/doc/ibfabric-exporter/copyright
  grep -qx 'License: Apache-2.0' "$copyright" || fail "copyright names no licence"
  grep -q '^Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' "$copyright" || fail "copyright format"
  grep -q 'Apache License' "$(dirname "$0")/../LICENSE" || fail "LICENSE is not the Apache License"
  depends=$(field Depends)
  echo "Depends: $depends"
  # Shared-library dependencies computed by dpkg-shlibdeps, plus rdma-core.
  for dep in libibumad3 libibmad5 libibnetdisc5 libssl3 libcrypt1 libxxhash0 libc6 'libstdc++6' rdma-core adduser; do
    # Package names only: "libstdc++6 (>= 11)" -> "libstdc++6", compared literally.
    printf '%s' "$depends" | tr ',' '\n' | sed 's/^ *//; s/ .*//' | grep -qxF "$dep" ||
      fail "Depends lacks $dep"
  done
  mkdir -p "$work/control"
  dpkg-deb -e "$file" "$work/control"
  printf '/etc/default/ibfabric-exporter\n/etc/ibfabric_exporter/ibfabric_exporter.yaml\n' >"$work/conffiles.expected"
  sort "$work/control/conffiles" | diff -u "$work/conffiles.expected" - || fail "conffiles"
  for script in postinst prerm postrm; do
    [ -x "$work/control/$script" ] || fail "$script missing or not executable"
    sh -n "$work/control/$script" || fail "$script: syntax error"
  done
  grep -q 'adduser --quiet --system --group' "$work/control/postinst" || fail "postinst creates no user"
  # One name: the maintainer scripts act on the unit the package ships, which
  # is named after the package (systemctl status ibfabric-exporter).
  units=$(grep -ho '[a-z_-]*\.service' "$work/control/postinst" "$work/control/prerm" "$work/control/postrm" | sort -u)
  [ "$units" = "$(field Package).service" ] || fail "maintainer scripts name $units"
  dpkg-deb -c "$file" | grep -q " \./lib/systemd/system/$(field Package)\.service\$" ||
    fail "no unit named after the package"
  echo "control OK"
  ;;

check-config)
  bin=$root/usr/bin/ibfabric_exporter
  conf=$root/etc/ibfabric_exporter/ibfabric_exporter.yaml
  out=$("$bin" --config.file="$conf" --check-config 2>&1) || fail "--check-config: $out"
  [ "$out" = "configuration OK" ] || fail "unexpected output: $out"
  # The packaged default must not write to the fabric.
  grep -Eq '^ *clear_on_threshold: false' "$conf" || fail "clear_on_threshold is not off by default"
  # The packaged web config example parses (its files do not exist here,
  # so expect exactly that complaint rather than a syntax error).
  if out=$("$bin" --config.file="$conf" \
    --web.config.file="$root/usr/share/ibfabric_exporter/examples/web-config.yml.example" --check-config 2>&1); then
    fail "example web config with missing files accepted"
  fi
  printf '%s' "$out" | grep -q 'tls_server_config.cert_file: cannot read /etc/ibfabric_exporter/tls.crt' ||
    fail "unexpected web config error: $out"
  "$bin" --version | grep -q '^ibfabric_exporter ' || fail "--version"
  echo "check-config OK"
  ;;

unit)
  unit=$root/lib/systemd/system/ibfabric-exporter.service
  [ -f "$unit" ] || fail "no unit in the package"
  for line in 'Type=notify' 'ExecReload=/bin/kill -HUP $MAINPID' 'Restart=on-failure' \
    'User=ibfabric_exporter' 'NoNewPrivileges=yes' 'ProtectSystem=strict' 'StateDirectory=ibfabric_exporter' 'ProtectHome=yes' \
    'PrivateTmp=yes' 'DevicePolicy=closed' 'DeviceAllow=char-infiniband_mad rw' \
    'EnvironmentFile=-/etc/default/ibfabric-exporter' 'Alias=ibfabric_exporter.service' 'CapabilityBoundingSet=' \
    'ExecStart=/usr/bin/ibfabric_exporter --config.file=/etc/ibfabric_exporter/ibfabric_exporter.yaml $ARGS'; do
    grep -qxF "$line" "$unit" || fail "unit lacks '$line'"
  done
  if grep -Eq '^(PrivateDevices|PrivateUsers)=' "$unit"; then fail "unit hides the umad devices"; fi
  # The templated unit (one daemon per subnet): the same hardening, and each
  # instance its own configuration, flags and state directory.
  template=$root/lib/systemd/system/ibfabric-exporter@.service
  [ -f "$template" ] || fail "no templated unit in the package"
  for line in 'EnvironmentFile=-/etc/default/ibfabric-exporter-%i' 'StateDirectory=ibfabric_exporter/%i' \
    'ExecStart=/usr/bin/ibfabric_exporter --config.file=/etc/ibfabric_exporter/%i.yaml --state.directory=/var/lib/ibfabric_exporter/%i $ARGS'; do
    grep -qxF "$line" "$template" || fail "templated unit lacks '$line'"
  done
  # Everything else, from the hardening to the restart policy, as in the
  # single unit.
  grep -E '^[A-Z][A-Za-z]*=' "$unit" | grep -Ev '^(Description|EnvironmentFile|ExecStart|StateDirectory|Alias)=' >"$work/unit-lines"
  while IFS= read -r line; do
    grep -qxF "$line" "$template" || fail "templated unit lacks '$line' of the single unit"
  done <"$work/unit-lines"
  if grep -Eq '^(PrivateDevices|PrivateUsers|Alias)=' "$template"; then fail "templated unit hides the umad devices or has an alias"; fi
  if ! command -v systemd-analyze >/dev/null 2>&1; then
    echo "systemd-analyze not installed: verify skipped"
    exit 0
  fi
  # verify checks that ExecStart's binary exists: point it at the unpacked
  # one (the only change), and treat any diagnostic as a failure, since
  # verify exits 0 on unknown keys and bad values.
  mkdir -p "$work/unit"
  sed "s|/usr/bin/ibfabric_exporter|$root/usr/bin/ibfabric_exporter|" "$unit" >"$work/unit/ibfabric-exporter.service"
  out=$(systemd-analyze verify --man=no "$work/unit/ibfabric-exporter.service" 2>&1) ||
    fail "systemd-analyze verify: $out"
  [ -z "$out" ] || fail "systemd-analyze verify: $out"
  sed "s|/usr/bin/ibfabric_exporter|$root/usr/bin/ibfabric_exporter|" "$template" >"$work/unit/ibfabric-exporter@.service"
  out=$(systemd-analyze verify --man=no "$work/unit/ibfabric-exporter@ib1.service" 2>&1) ||
    fail "systemd-analyze verify ibfabric-exporter@ib1: $out"
  [ -z "$out" ] || fail "systemd-analyze verify ibfabric-exporter@ib1: $out"
  if exposure=$(systemd-analyze security --offline=yes "$work/unit/ibfabric-exporter.service" 2>/dev/null | tail -1); then
    echo "systemd-analyze security: $exposure"
  fi
  echo "unit OK"
  ;;

*)
  fail "unknown step $step"
  ;;
esac
