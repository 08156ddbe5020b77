#!/bin/sh
# Tests tools/install-deps without installing anything: fake apt-get,
# dpkg-query, systemctl and sudo on PATH, and IBFX_INSTALL_ROOT pointing at a
# scratch directory that stands for /. The fake apt-get "installs" a package
# by recording it and dropping the unit files and init scripts the real
# package ships (opensm.service + /etc/init.d/opensm, prometheus.service,
# victoria-metrics.service + /etc/init.d/victoria-metrics);
# while it runs it checks that policy-rc.d forbids starting services.
#   install_deps_test.sh SOURCE_DIR WORK_DIR
set -eu

src=$(cd "$1" && pwd)
work=$2
script=$src/tools/install-deps

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# A fresh scratch root with the fakes; $1: packages already installed.
setup() {
  rm -rf "$work"
  mkdir -p "$work/bin" "$work/root/lib/systemd/system" "$work/root/etc/init.d" "$work/root/usr/sbin"
  root=$work/root
  log=$work/log
  : >"$log"
  for p in $1; do echo "$p" >>"$work/installed"; done
  touch "$work/installed"
  # The administrator's own services, present before the script runs.
  echo '[Service]' >"$root/lib/systemd/system/ssh.service"
  echo '#!/bin/sh' >"$root/etc/init.d/ssh"

  cat >"$work/bin/dpkg-query" <<EOF
#!/bin/sh
# dpkg-query -W -f='\${Status}' PACKAGE
for p; do :; done
grep -qx "\$p" "$work/installed" && printf 'install ok installed' && exit 0
exit 1
EOF
  cat >"$work/bin/apt-get" <<EOF
#!/bin/sh
echo "apt-get \$*" >>"$log"
[ "\$1" = install ] || exit 0
# Each service start a postinst would try goes through policy-rc.d.
policy="$root/usr/sbin/policy-rc.d"
[ -x "\$policy" ] || { echo "apt-get ran without policy-rc.d" >>"$log"; exit 1; }
"\$policy" opensm start && { echo "policy-rc.d allowed a start" >>"$log"; exit 1; }
[ \$? -eq 101 ] || { echo "policy-rc.d did not answer 101" >>"$log"; exit 1; }
for p; do
  case \$p in
  -*) continue ;;
  opensm) echo '[Service]' >"$root/lib/systemd/system/opensm.service"; echo '#!/bin/sh' >"$root/etc/init.d/opensm" ;;
  prometheus) echo '[Service]' >"$root/lib/systemd/system/prometheus.service" ;;
  victoria-metrics) echo '[Service]' >"$root/lib/systemd/system/victoria-metrics.service"; echo '#!/bin/sh' >"$root/etc/init.d/victoria-metrics" ;;
  esac
  echo "\$p" >>"$work/installed"
done
EOF
  cat >"$work/bin/systemctl" <<EOF
#!/bin/sh
echo "systemctl \$*" >>"$log"
EOF
  cat >"$work/bin/sudo" <<'EOF'
#!/bin/sh
exec "$@"
EOF
  chmod +x "$work/bin/"*
}

run() {
  PATH=$work/bin:$PATH IBFX_INSTALL_ROOT=$root sh "$script" "$@" >"$work/out" 2>&1 ||
    { cat "$work/out" "$log" >&2; fail "install-deps $* failed"; }
}

installed() { grep -qx "$1" "$work/installed"; }

# 1. The default set builds and runs the daemon: no subnet manager, no
#    Prometheus server, no simulator.
setup ""
run
installed libibumad-dev || fail "default set lacks libibumad-dev"
installed g++ || fail "default set lacks g++"
for p in opensm prometheus victoria-metrics ibsim-utils clang-14; do
  if installed "$p"; then fail "default set installs $p"; fi
done
[ ! -e "$root/usr/sbin/policy-rc.d" ] || fail "policy-rc.d left behind"
if grep -q 'systemctl' "$log"; then fail "disabled a unit though none was installed: $(cat "$log")"; fi
echo "ok 1 default set: build and run only"

# 2. --test adds the demo and test tools; their services are kept from
#    starting (policy-rc.d during apt-get, checked by the fake) and disabled
#    afterwards; the administrator's ssh is left alone.
setup ""
run --test
for p in opensm prometheus victoria-metrics ibsim-utils clang-14 libfuzzer-14-dev clang-format-14 clang-tidy-14; do
  installed "$p" || fail "--test does not install $p"
done
if grep -q 'policy-rc.d' "$log"; then fail "$(cat "$log")"; fi
[ ! -e "$root/usr/sbin/policy-rc.d" ] || fail "policy-rc.d left behind"
for unit in opensm.service prometheus.service victoria-metrics.service; do
  grep -qx "systemctl --root=$root disable --quiet $unit" "$log" || fail "$unit not disabled: $(cat "$log")"
done
for name in opensm victoria-metrics; do
  [ "$(grep -c "disable.*$name" "$log")" -eq 1 ] || fail "$name disabled more than once: $(cat "$log")"
done
if grep -q 'ssh' "$log"; then fail "touched the administrator's ssh: $(cat "$log")"; fi
echo "ok 2 --test: services neither started nor left enabled"

# 3. An administrator's own policy-rc.d is restored byte for byte, and a
#    service whose package was installed before is not touched.
setup "opensm"
echo '[Service]' >"$root/lib/systemd/system/opensm.service"
printf '#!/bin/sh\n# site policy\nexit 0\n' >"$root/usr/sbin/policy-rc.d"
chmod 755 "$root/usr/sbin/policy-rc.d"
cp -p "$root/usr/sbin/policy-rc.d" "$work/policy.orig"
run --test
cmp -s "$work/policy.orig" "$root/usr/sbin/policy-rc.d" || fail "site policy-rc.d not restored"
[ -x "$root/usr/sbin/policy-rc.d" ] || fail "site policy-rc.d lost its mode"
if grep -q 'disable --quiet opensm' "$log"; then fail "disabled the pre-existing opensm.service"; fi
grep -q 'disable --quiet prometheus.service' "$log" || fail "prometheus.service not disabled"
echo "ok 3 site policy-rc.d and existing services untouched"

# 4. Everything present: apt-get is not run at all.
setup "$(sed -n '/^BUILD_PACKAGES="/,/^"/p; /^TEST_PACKAGES="/,/^"/p' "$script" | grep -v '"')"
run --test
[ ! -s "$log" ] || fail "ran with everything installed: $(cat "$log")"
echo "ok 4 nothing to do"

# 5. A failing apt-get still removes the temporary policy-rc.d.
setup ""
printf '#!/bin/sh\nexit 100\n' >"$work/bin/apt-get"
if PATH=$work/bin:$PATH IBFX_INSTALL_ROOT=$root sh "$script" >"$work/out" 2>&1; then
  fail "apt-get failure not reported"
fi
[ ! -e "$root/usr/sbin/policy-rc.d" ] || fail "policy-rc.d left behind after a failure"
echo "ok 5 failure cleans up"

# 6. An unknown option is refused.
if sh "$script" --bogus >/dev/null 2>&1; then fail "--bogus accepted"; fi
echo "ok 6 usage"
