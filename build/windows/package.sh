#!/usr/bin/env bash
# make package-windows: the Windows desktop build (windows/amd64, no cgo,
# GUI subsystem) with its icon, manifest and version resource, and its
# per-user NSIS installer:
#
#   bin/ccmesh-desktop.exe
#   dist/windows/ccmesh_<version>_windows_amd64_setup.exe
#
# <version> is the .deb's and the release files' (go -C build/package run
# . version). The Makefile sets GO, VERSION, DATE, LDFLAGS and TAGS. The
# resources go into a .syso next to main.go for the one build and are
# removed after it, so no other build links them.
set -euo pipefail
cd "$(dirname "$0")/../.."
for v in GO VERSION DATE LDFLAGS TAGS; do
  [ -n "${!v:-}" ] || { echo "package-windows: $v is unset: run this through make package-windows" >&2; exit 1; }
done
# makensis (Debian's nsis); as root build/deps.sh installs it, otherwise
# it prints the apt-get line.
bash build/deps.sh nsis
command -v makensis >/dev/null || { echo "package-windows: makensis not found (Debian package nsis)" >&2; exit 1; }

packager=("$GO" -C build/package run .)
root=$PWD
exe=bin/ccmesh-desktop.exe
ico=bin/ccmesh.ico
syso=ccmesh_windows_amd64.syso
# shellcheck disable=SC2153 # VERSION (the Makefile's) is not version
version=$("${packager[@]}" version "$VERSION")
quad=$("${packager[@]}" winversion "$VERSION")
out=dist/windows/ccmesh_${version}_windows_amd64_setup.exe

mkdir -p bin dist/windows
trap 'rm -f "$root/$syso"' EXIT
"${packager[@]}" winres -icon "$root/build/appicon.png" -version "$VERSION" -date "$DATE" \
  -arch amd64 -syso "$root/$syso" -ico "$root/$ico"
GOOS=windows GOARCH=amd64 CGO_ENABLED=0 "$GO" build -trimpath -tags "$TAGS" \
  -ldflags "$LDFLAGS -H windowsgui" -o "$exe" .
rm -f "$root/$syso"
# The installer stores the file's mtime: the commit's, so one tree gives
# the same file list.
touch -d "$DATE" "$exe"
echo "package-windows: $exe ($VERSION, resource version $quad)"

# Only this version's installer stays, so dist/windows names one release.
rm -f dist/windows/ccmesh_*_windows_amd64_setup.exe
makensis -V2 -INPUTCHARSET UTF8 -DVERSION="$version" -DVERSION_QUAD="$quad" -DEXE="$root/$exe" \
  -DICON="$root/$ico" -DOUTFILE="$root/$out" build/windows/ccmesh.nsi
echo "package-windows: $out"
