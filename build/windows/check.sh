#!/usr/bin/env bash
# make test-package-windows: checks what make package-windows wrote, as far
# as this machine can without Windows (Go 1.26 binaries do not start under
# Debian 12's wine 8, which lacks bcryptprimitives.dll):
#
#   - bin/ccmesh-desktop.exe: go version -m (windows/amd64, no cgo, the
#     desktop tags), VERSION in it, and debug/pe (amd64, GUI
#     subsystem, the icon, manifest and version resources:
#     build/package checkexe);
#   - the installer: 7z lists it as NSIS with ccmesh.exe and uninstall.exe
#     and nothing else outside $PLUGINSDIR, and unpacks them, the exe
#     byte for byte the one built;
#   - build/windows/ccmesh.nsi: build/package's TestInstallerScript (the
#     HKCU uninstall entry, the Start menu shortcut, the optional Run value).
#
# The Makefile sets GO, CCMESH_VERSION (its VERSION) and CCMESH_DEB_VERSION.
set -euo pipefail
cd "$(dirname "$0")/../.."
test_name=test-package-windows
# shellcheck source=build/package/lib.sh
. build/package/lib.sh

for v in GO CCMESH_VERSION CCMESH_DEB_VERSION; do
  [ -n "${!v:-}" ] || fail "$v is unset: run this through make test-package-windows"
done
bash build/deps.sh p7zip-full || fail "7z is needed (Debian package p7zip-full): see the apt-get line above"
need "$GO" 7z cmp
exe=bin/ccmesh-desktop.exe
setup=dist/windows/ccmesh_${CCMESH_DEB_VERSION}_windows_amd64_setup.exe
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

[ -s "$exe" ] || fail "$exe is missing: run make package-windows"
info=$("$GO" version -m "$exe") || fail "go version -m $exe: not a Go binary"
for line in "path"$'\t'"github.com/ccmesh/ccmesh" "build"$'\t'"GOOS=windows" "build"$'\t'"GOARCH=amd64" \
  "build"$'\t'"CGO_ENABLED=0" "build"$'\t'"-tags=desktop,production"; do
  grep -qF "$line" <<<"$info" || fail "$exe: go version -m lacks '$line':
$info"
done
# -trimpath keeps the ldflags out of the build info, so the version that
# -X set is looked for in the binary itself (checkexe reads the resource's).
grep -qaF -- "$CCMESH_VERSION" "$exe" || fail "$exe does not hold its version $CCMESH_VERSION (-X app.Version)"
pass "$exe: go version -m: ccmesh for windows/amd64, no cgo, tags desktop,production, version $CCMESH_VERSION"

out=$("$GO" -C build/package run . checkexe -version "$CCMESH_VERSION" "$PWD/$exe") || fail "checkexe (above)"
pass "debug/pe: $out"

[ -s "$setup" ] || fail "$setup is missing: run make package-windows"
others=$(find dist/windows -maxdepth 1 -name 'ccmesh_*_setup.exe' ! -path "$setup")
[ -z "$others" ] || fail "dist/windows holds installers of other versions: $others"
listing=$(7z l -slt "$setup") || fail "7z l $setup failed:
$listing"
grep -qx 'Type = Nsis' <<<"$listing" || fail "7z does not read $setup as an NSIS installer:
$(head -20 <<<"$listing")"
files=$(sed -n 's/^Path = //p' <<<"$listing" | grep -vx "$setup" | sort)
want=$(printf '%s\n' ccmesh.exe uninstall.exe)
# $PLUGINSDIR is NSIS's, not the shell's.
# shellcheck disable=SC2016
plugins='^\$PLUGINSDIR/'
got=$(grep -v "$plugins" <<<"$files" || true)
[ "$got" = "$want" ] || fail "$setup installs other files than ccmesh.exe and uninstall.exe:
$(diff <(echo "$want") <(echo "$got"))"
pass "7z l $setup: NSIS, installs ccmesh.exe and uninstall.exe ($(grep -c "$plugins" <<<"$files") plugin files beside)"

(cd "$work" && 7z x -y "$OLDPWD/$setup" >"$work/7z.log") || fail "7z x $setup failed:
$(cat "$work/7z.log")"
cmp -s "$work/ccmesh.exe" "$exe" || fail "the installer's ccmesh.exe differs from $exe"
[ "$(head -c2 "$work/uninstall.exe")" = MZ ] || fail "the installer's uninstall.exe is not a Windows executable"
pass "7z x: ccmesh.exe is $exe byte for byte, uninstall.exe is an executable"

"$GO" -C build/package test -count=1 -run 'TestInstallerScript|TestWindowsResources|TestWinVersion' . >"$work/test.log" 2>&1 ||
  fail "build/package's installer and resource tests failed:
$(cat "$work/test.log")"
pass "build/package: TestInstallerScript (HKCU uninstall entry, Start menu shortcut, optional Run value), TestWindowsResources, TestWinVersion"

done_ok
