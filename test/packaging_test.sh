#!/bin/sh
# Debian package checks, one step per ctest test (see test/packaging.cmake):
#   packaging_test.sh STEP BUILD_DIR WORK_DIR
# build         cpack -G DEB into WORK_DIR and unpack it into WORK_DIR/root
# contents      the files the package must ship
# control       Package, Depends (from dpkg-shlibdeps + rdma-core), conffiles, scripts
# check-config  the unpacked binary accepts the packaged default config
# unit          systemd-analyze verify on the packaged unit and an instance of the
#               templated one (skipped without it)
# maintainer-scripts  postinst, prerm and postrm on install, upgrade, remove and purge, with fake
#               systemctl, deb-systemd-invoke, deb-systemd-helper and udevadm:
#               every instance of the templated unit is stopped and disabled
#               with the main unit, with or without systemd running, and the running
#               ones restarted on upgrade
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
  # One name: the maintainer scripts act on the units the package ships,
  # named after the package (systemctl status ibfabric-exporter), and the
  # instances of its template (ibfabric-exporter@<name>.service), "@" below.
  units=$(grep -ho '[a-z][a-z_-]*\(@[^ ]*\)\{0,1\}\.service' "$work/control/postinst" "$work/control/prerm" \
    "$work/control/postrm" | sed 's/@.*/@/' | LC_ALL=C sort -u | tr '\n' ' ')
  [ "$units" = "$(field Package).service $(field Package)@ " ] || fail "maintainer scripts name $units"
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

maintainer-scripts)
  ms=$work/maintainer-scripts
  # Its own copy of the control files: the control step may run alongside.
  rm -rf "$work/ms-control"
  dpkg-deb -e "$(deb)" "$work/ms-control"
  # The scripts read systemd's and udev's state under / : run copies that read
  # it under $ms/root instead (the only change), and put the fakes first on
  # PATH. Each fake logs its arguments; systemctl list-units answers as
  # systemd 252 does with two instances loaded, one of them failed.
  setup_ms() {
    rm -rf "$ms"
    mkdir -p "$ms/bin" "$ms/root/etc/systemd/system/multi-user.target.wants" "$ms/root/run/udev"
    for script in postinst prerm postrm; do
      sed -e "s|/run/systemd/system|$ms/root/run/systemd/system|g" \
        -e "s|/etc/systemd/system|$ms/root/etc/systemd/system|g" \
        -e "s|/run/udev|$ms/root/run/udev|g" "$work/ms-control/$script" >"$ms/$script"
    done
    : >"$ms/log"
    # getent answers that the system user exists (postinst adds none).
    for tool in systemctl deb-systemd-invoke deb-systemd-helper udevadm getent adduser; do
      cat >"$ms/bin/$tool" <<EOF
#!/bin/sh
echo "$tool \$*" >>"$ms/log"
if [ "$tool" = systemctl ] && [ "\$1" = list-units ]; then
  echo 'ibfabric-exporter@plane1.service loaded active running InfiniBand fabric telemetry exporter for Prometheus (plane1)'
  echo '● ibfabric-exporter@plane2.service loaded failed failed InfiniBand fabric telemetry exporter for Prometheus (plane2)'
  echo 'ssh.service loaded active running OpenBSD Secure Shell server'
fi
exit 0
EOF
      chmod +x "$ms/bin/$tool"
    done
    # Enabled: the main unit, plane1 (running) and plane3 (stopped, so not
    # loaded); plane2 failed and is not enabled.
    for unit in ibfabric-exporter.service ibfabric-exporter@plane1.service ibfabric-exporter@plane3.service; do
      ln -s /lib/systemd/system/"$(echo "$unit" | sed 's/@[^.]*\./@./')" \
        "$ms/root/etc/systemd/system/multi-user.target.wants/$unit"
    done
  }
  run_ms() { # PATH SCRIPT ARG...
    path=$1
    script=$2
    shift 2
    PATH=$path /bin/sh "$ms/$script" "$@" >>"$ms/out" 2>&1 || { cat "$ms/out" "$ms/log" >&2; fail "$script $* failed"; }
  }
  logged() { grep -qxF "$1" "$ms/log" || { cat "$ms/log" >&2; fail "$2: no '$1'"; }; }
  not_logged() { if grep -E "$1" "$ms/log"; then fail "$2"; fi; }
  wants=$ms/root/etc/systemd/system/multi-user.target.wants
  instances="plane1 plane2 plane3"

  # 1. Remove with systemd running: the main unit and every instance, loaded
  #    or enabled, stopped; every instance disabled; the main unit's
  #    enablement kept until purge, as debhelper does.
  setup_ms
  mkdir -p "$ms/root/run/systemd/system"
  run_ms "$ms/bin:$PATH" prerm remove
  logged "deb-systemd-invoke stop ibfabric-exporter.service" "prerm remove"
  for i in $instances; do
    logged "deb-systemd-invoke stop ibfabric-exporter@$i.service" "prerm remove"
    logged "systemctl --no-reload disable ibfabric-exporter@$i.service" "prerm remove"
  done
  not_logged 'ssh' "prerm remove touched another unit"
  [ -L "$wants/ibfabric-exporter.service" ] || fail "prerm remove disabled the main unit before purge"
  for i in plane1 plane3; do
    [ ! -L "$wants/ibfabric-exporter@$i.service" ] || fail "prerm remove left ibfabric-exporter@$i enabled"
  done
  run_ms "$ms/bin:$PATH" postrm remove
  logged "systemctl --system daemon-reload" "postrm remove"
  logged "deb-systemd-helper mask ibfabric-exporter.service" "postrm remove"
  run_ms "$ms/bin:$PATH" postrm purge
  logged "deb-systemd-helper purge ibfabric-exporter.service" "postrm purge"
  logged "deb-systemd-helper unmask ibfabric-exporter.service" "postrm purge"

  # 2. Upgrade: prerm stops and disables nothing (postinst restarts the
  #    main unit).
  setup_ms
  mkdir -p "$ms/root/run/systemd/system"
  run_ms "$ms/bin:$PATH" prerm upgrade
  not_logged 'stop|disable' "prerm upgrade stopped or disabled a unit"
  [ -L "$wants/ibfabric-exporter@plane1.service" ] || fail "prerm upgrade disabled an instance"
  # ... and postinst restarts the main unit and the running instances, on
  # the new binary; a fresh install starts the main unit only.
  run_ms "$ms/bin:$PATH" postinst configure 0.0.9
  logged "deb-systemd-invoke restart ibfabric-exporter.service" "postinst upgrade"
  logged "systemctl try-restart ibfabric-exporter@*.service" "postinst upgrade"
  not_logged 'adduser' "postinst upgrade added the user again"
  : >"$ms/log"
  run_ms "$ms/bin:$PATH" postinst configure
  logged "deb-systemd-invoke start ibfabric-exporter.service" "postinst install"
  not_logged 'try-restart' "postinst install restarted instances"

  # 3. Remove without systemd running (a chroot, a container): nothing to
  #    stop, the instances still disabled, on the file system.
  setup_ms
  run_ms "$ms/bin:$PATH" prerm remove
  not_logged 'stop' "prerm remove stopped a unit without systemd running"
  for i in plane1 plane3; do
    logged "systemctl --no-reload disable ibfabric-exporter@$i.service" "prerm remove without systemd"
    [ ! -L "$wants/ibfabric-exporter@$i.service" ] || fail "prerm remove without systemd left ibfabric-exporter@$i enabled"
  done
  run_ms "$ms/bin:$PATH" postrm remove
  not_logged 'daemon-reload' "postrm remove reloaded systemd without systemd running"

  # 4. Neither systemd nor its tools: the scripts succeed, and the
  #    instances' symlinks go all the same.
  setup_ms
  mkdir -p "$ms/min"
  for tool in grep sort rm sed; do ln -s "$(command -v $tool)" "$ms/min/$tool"; done
  run_ms "$ms/min" prerm remove
  run_ms "$ms/min" postrm remove
  run_ms "$ms/min" postrm purge
  [ ! -s "$ms/log" ] || { cat "$ms/log" >&2; fail "a fake ran though not on PATH"; }
  for i in plane1 plane3; do
    [ ! -L "$wants/ibfabric-exporter@$i.service" ] || fail "prerm remove without systemctl left ibfabric-exporter@$i enabled"
  done
  echo "maintainer-scripts OK"
  ;;

*)
  fail "unknown step $step"
  ;;
esac
