#!/usr/bin/env bash
# make test-package: installs dist/ccmesh_<version>_<arch>.deb with apt-get,
# checks what it put where and that the installed ccmesh serves, purges it
# and checks the machine is as it was. Also checks that build/deps.sh, run
# by an unprivileged user, stops with the apt-get line. Needs root: it
# installs a package. The Makefile sets CCMESH_VERSION (its VERSION) and
# CCMESH_DEB_VERSION (what build/package makes of it).
set -euo pipefail
cd "$(dirname "$0")/../.."
test_name=test-package
# shellcheck source=build/package/lib.sh
. build/package/lib.sh

if [ "$(id -u)" -ne 0 ]; then
  echo "test-package: needs root, to install and purge the .deb with apt-get: run it as root (sudo make test-package)" >&2
  exit 1
fi
{ [ -n "${CCMESH_VERSION:-}" ] && [ -n "${CCMESH_DEB_VERSION:-}" ]; } ||
  fail "CCMESH_VERSION and CCMESH_DEB_VERSION are unset: run this through make test-package"
need apt-get dpkg dpkg-deb dpkg-query curl objdump ldd setpriv shellcheck desktop-file-validate od tar
export DEBIAN_FRONTEND=noninteractive

work=$(mktemp -d)
deps=
installed=0
cleanup() {
  stop_serving
  if [ "$installed" = 1 ]; then
    echo "test-package: purging ccmesh after a failure" >&2
    apt-get purge -y -qq ccmesh >/dev/null 2>&1 || echo "test-package: apt-get purge ccmesh failed: remove it by hand" >&2
  fi
  rm -rf "$work" ${deps:+"$deps"}
}
trap cleanup EXIT

# --- the scripts ------------------------------------------------------------
shellcheck -x build/deps.sh build/package/*.sh build/windows/*.sh .ci/run || fail "shellcheck found problems (above)"
pass "shellcheck: build/deps.sh build/package/*.sh build/windows/*.sh .ci/run"

# --- build/deps.sh as a user who cannot install -----------------------------
deps=$(mktemp -d) # not in $work: nobody must be able to read it
chmod 755 "$deps"
install -m 755 build/deps.sh "$deps/deps.sh"
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
rc=0
out=$(as_nobody bash "$deps/deps.sh" bash ccmesh-deps-check-missing 2>&1) || rc=$?
want="apt-get update && apt-get install -y --no-install-recommends ccmesh-deps-check-missing"
[ "$rc" != 0 ] || fail "build/deps.sh as nobody with a missing package exited 0: $out"
grep -qxF "$want" <<<"$out" || fail "build/deps.sh as nobody did not print the line '$want'; it printed:
$out"
pass "build/deps.sh as nobody, a package missing: exit $rc and the line '$want'"
rc=0
out=$(as_nobody bash "$deps/deps.sh" bash coreutils 2>&1) || rc=$?
{ [ "$rc" = 0 ] && [ -z "$out" ]; } || fail "build/deps.sh as nobody, nothing missing: exit $rc, printed: $out"
pass "build/deps.sh as nobody, nothing missing: exit 0, silent"

# --- the package file -------------------------------------------------------
arch=$(dpkg --print-architecture)
debs=(dist/ccmesh_*_"$arch".deb)
{ [ ${#debs[@]} = 1 ] && [ -f "${debs[0]}" ]; } || fail "want exactly one dist/ccmesh_*_$arch.deb (make package), found: ${debs[*]}"
deb=${debs[0]}
[ "$deb" = "dist/ccmesh_${CCMESH_DEB_VERSION}_$arch.deb" ] ||
  fail "the package is $deb, want dist/ccmesh_${CCMESH_DEB_VERSION}_$arch.deb"
[ "$(dpkg-deb -f "$deb" Package)" = ccmesh ] || fail "$deb: Package is not ccmesh"
[ "$(dpkg-deb -f "$deb" Version)" = "$CCMESH_DEB_VERSION" ] || fail "$deb: Version $(dpkg-deb -f "$deb" Version), want $CCMESH_DEB_VERSION"
pass "$deb: package ccmesh, version $CCMESH_DEB_VERSION, arch $arch"

depends=$(dpkg-deb -f "$deb" Depends)
case $depends in *-dev*) fail "Depends names a development package: $depends" ;; esac
# The package of every library the binary links must be in Depends.
depnames=" $(sed -E 's/ \([^)]*\)//g; s/,//g' <<<"$depends") "
dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/bin/ccmesh >"$work/ccmesh"
chmod 755 "$work/ccmesh"
pkg_of() {
  local p=$1 r c
  r=$(readlink -f "$p")
  # Debian 12 has /lib → /usr/lib; dpkg knows each file under one of them.
  for c in "$p" "$r" "${r#/usr}" "/usr${p#/usr}"; do
    if dpkg -S "$c" >"$work/dpkg-S" 2>/dev/null; then
      head -n1 "$work/dpkg-S" | cut -d: -f1
      return 0
    fi
  done
  return 1
}
needed=$(objdump -p "$work/ccmesh" | awk '$1 == "NEEDED" {print $2}')
[ -n "$needed" ] || fail "the packaged binary links no shared library: not the desktop build"
for so in $needed; do
  path=$(ldd "$work/ccmesh" | awk -v so="$so" '$1 == so {print $3}')
  { [ -n "$path" ] && [ "$path" != "not" ]; } || fail "$so, linked by the binary, is not on this machine (ldd)"
  pkg=$(pkg_of "$path") || fail "no Debian package holds $path ($so)"
  case $depnames in *" $pkg "*) ;; *) fail "the binary links $so from $pkg, which Depends lacks: $depends" ;; esac
done
pass "Depends ($depends) names the package of each library the binary links, and no -dev package"

# --- the machine before -------------------------------------------------------
if dpkg-query -W ccmesh >/dev/null 2>&1; then
  fail "ccmesh is already known to dpkg ($(dpkg-query -W -f='${db:Status-Abbrev} ${Version}' ccmesh)): this test installs and purges it, so apt-get purge ccmesh first"
fi
dpkg-query -W -f='${binary:Package} ${Version} ${db:Status-Abbrev}\n' | sort >"$work/before"
dpkg-deb --fsys-tarfile "$deb" | tar -t | sed -E 's#^\.##; s#/$##' | grep . >"$work/paths"
while read -r p; do [ -e "$p" ] && echo "$p"; done <"$work/paths" >"$work/existed" || true

# --- install ----------------------------------------------------------------
installed=1
apt-get install -y -qq --no-install-recommends "$PWD/$deb" >"$work/apt.log" 2>&1 ||
  fail "apt-get install ./$deb failed:
$(cat "$work/apt.log")"
status=$(dpkg-query -W -f='${Status} ${Version}' ccmesh)
[ "$status" = "install ok installed $CCMESH_DEB_VERSION" ] || fail "after apt-get install: dpkg says '$status'"
pass "apt-get install ./$deb"
{ out=$(dpkg --verify ccmesh 2>&1) && [ -z "$out" ]; } || fail "dpkg --verify ccmesh: $out"
pass "dpkg --verify ccmesh: every file as packaged"

[ -x /usr/bin/ccmesh ] || fail "/usr/bin/ccmesh is missing or not executable"
[ "$(command -v ccmesh)" = /usr/bin/ccmesh ] || fail "ccmesh on PATH is $(command -v ccmesh), want /usr/bin/ccmesh"
pass "/usr/bin/ccmesh is the ccmesh on PATH"

entry=/usr/share/applications/ccmesh.desktop
[ -f "$entry" ] || fail "$entry is missing"
{ out=$(desktop-file-validate "$entry" 2>&1) && [ -z "$out" ]; } || fail "desktop-file-validate $entry: $out"
pass "desktop-file-validate $entry: no error, warning or hint"

png_size() {
  [ "$(od -An -tx1 -N8 "$1" | tr -d ' \n')" = 89504e470d0a1a0a ] || return 1
  od -An -tu1 -j16 -N8 "$1" | awk '{ print $1*16777216 + $2*65536 + $3*256 + $4 "x" $5*16777216 + $6*65536 + $7*256 + $8 }'
}
for n in 16 24 32 48 64 128 256 512; do
  icon=/usr/share/icons/hicolor/${n}x$n/apps/ccmesh.png
  [ -f "$icon" ] || fail "$icon is missing"
  size=$(png_size "$icon") || fail "$icon is not a PNG"
  [ "$size" = "${n}x$n" ] || fail "$icon is $size, want ${n}x$n"
done
pass "icons: /usr/share/icons/hicolor/{16x16,…,512x512}/apps/ccmesh.png, PNGs of those sizes"

unit=/usr/lib/systemd/user/ccmesh.service
[ -f "$unit" ] || fail "$unit is missing"
for line in "ExecStart=/usr/bin/ccmesh --headless" "Restart=on-failure"; do
  grep -qxF "$line" "$unit" || fail "$unit lacks the line $line"
done
pass "$unit runs /usr/bin/ccmesh --headless, Restart=on-failure"
if command -v systemd-analyze >/dev/null; then
  # A user manager's checks, without a user session: a private runtime dir.
  mkdir -m 700 "$work/runtime"
  { out=$(XDG_RUNTIME_DIR=$work/runtime systemd-analyze --user verify "$unit" 2>&1) && [ -z "$out" ]; } ||
    fail "systemd-analyze --user verify $unit: $out"
  pass "systemd-analyze --user verify $unit: nothing to say"
else
  echo "note: no systemd-analyze here, so the unit was checked by its lines only"
fi

out=$(ccmesh --version)
case $out in
  "ccmesh $CCMESH_VERSION (commit "*", built "*")") pass "ccmesh --version: $out" ;;
  *) fail "ccmesh --version printed '$out', want 'ccmesh $CCMESH_VERSION (commit …, built …)'" ;;
esac
serve_check /usr/bin/ccmesh "$CCMESH_VERSION" "$work"

# --- purge, and the machine after ----------------------------------------------
apt-get purge -y -qq ccmesh >"$work/apt.log" 2>&1 || fail "apt-get purge ccmesh failed:
$(cat "$work/apt.log")"
installed=0
if dpkg-query -W ccmesh >/dev/null 2>&1; then
  fail "after apt-get purge dpkg still knows ccmesh: $(dpkg-query -W -f='${db:Status-Abbrev}' ccmesh)"
fi
pass "apt-get purge ccmesh: dpkg no longer knows it"
dpkg-query -W -f='${binary:Package} ${Version} ${db:Status-Abbrev}\n' | sort >"$work/after"
if ! cmp -s "$work/before" "$work/after"; then
  # What apt pulled in for ccmesh goes with it (make deps installs all of
  # it first, so this happens only on a machine set up another way).
  extra=$(comm -13 <(awk '{print $1}' "$work/before") <(awk '{print $1}' "$work/after"))
  if [ -n "$extra" ]; then
    echo "test-package: purging what the install pulled in: $extra"
    # shellcheck disable=SC2086 # one word per package
    apt-get purge -y -qq $extra >/dev/null 2>&1 || true
    dpkg-query -W -f='${binary:Package} ${Version} ${db:Status-Abbrev}\n' | sort >"$work/after"
  fi
  cmp -s "$work/before" "$work/after" || fail "the installed packages differ from before the test:
$(diff "$work/before" "$work/after")"
fi
pass "the installed packages are as before the test"
while read -r p; do
  if grep -qxF "$p" "$work/existed"; then
    [ -e "$p" ] || fail "$p existed before the test and is gone"
  else
    [ ! -e "$p" ] || fail "$p is still there after apt-get purge"
  fi
done <"$work/paths"
pass "every path the package installed is gone again, and what was there before is still there"

done_ok
