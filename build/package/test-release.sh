#!/usr/bin/env bash
# make test-release: checks what make release wrote to dist/release: one
# binary per target named ccmesh_<version>_<os>_<arch>[.exe] (and the Windows
# installer of make package-windows), each binary built for
# that GOOS/GOARCH without cgo (go version -m), SHA256SUMS that lists them
# all and holds (sha256sum -c), and the binary of this machine's target run:
# --version, then headless with the UI built in. The Makefile sets GO,
# RELEASE_TARGETS, CCMESH_VERSION (its VERSION) and CCMESH_DEB_VERSION.
set -euo pipefail
cd "$(dirname "$0")/../.."
test_name=test-release
# shellcheck source=build/package/lib.sh
. build/package/lib.sh

for v in GO RELEASE_TARGETS CCMESH_VERSION CCMESH_DEB_VERSION; do
  [ -n "${!v:-}" ] || fail "$v is unset: run this through make test-release"
done
need "$GO" sha256sum curl
dir=dist/release
work=$(mktemp -d)
trap 'stop_serving; rm -rf "$work"' EXIT

native=$("$GO" env GOOS)/$("$GO" env GOARCH)
want_files=(SHA256SUMS)
native_bin=
for t in $RELEASE_TARGETS; do
  os=${t%/*} arch=${t#*/} ext=
  [ "$os" != windows ] || ext=.exe
  name=ccmesh_${CCMESH_DEB_VERSION}_${os}_$arch$ext
  want_files+=("$name")
  [ -s "$dir/$name" ] || fail "$dir/$name is missing or empty"
  info=$("$GO" version -m "$dir/$name") || fail "go version -m $dir/$name: not a Go binary"
  for line in "path"$'\t'"github.com/ccmesh/ccmesh" "build"$'\t'"GOOS=$os" "build"$'\t'"GOARCH=$arch" "build"$'\t'"CGO_ENABLED=0"; do
    grep -qF "$line" <<<"$info" || fail "$name: go version -m lacks '$line':
$info"
  done
  if grep -q $'^\tbuild\t-tags=' <<<"$info"; then
    fail "$name was built with tags ($(grep $'\t-tags=' <<<"$info")): release binaries are the plain headless build"
  fi
  pass "$name: ccmesh for $os/$arch, no cgo, no build tags"
  [ "$t" != "$native" ] || native_bin=$dir/$name
done

# make release puts package-windows' installer beside the binaries.
setup=ccmesh_${CCMESH_DEB_VERSION}_windows_amd64_setup.exe
want_files+=("$setup")
[ -s "$dir/$setup" ] || fail "$dir/$setup (the Windows installer) is missing or empty"
pass "$setup: the Windows installer is in the release"

got=$(find "$dir" -mindepth 1 -printf "%P\n" | sort)
want=$(printf '%s\n' "${want_files[@]}" | sort)
[ "$got" = "$want" ] || fail "$dir holds other files than the release:
$(diff <(echo "$want") <(echo "$got"))"
pass "$dir holds the ${#want_files[@]} files of the release and nothing else"

listed=$(awk '{print $2}' "$dir/SHA256SUMS" | sed 's/^\*//' | sort)
[ "$listed" = "$(printf '%s\n' "${want_files[@]}" | grep -vx SHA256SUMS | sort)" ] ||
  fail "SHA256SUMS lists $(echo "$listed" | tr '\n' ' '), want every binary once"
(cd "$dir" && sha256sum --check --strict --quiet SHA256SUMS) || fail "sha256sum -c SHA256SUMS failed (above)"
pass "sha256sum -c SHA256SUMS: all $(wc -l <<<"$listed") binaries hold"
# The same check must catch a wrong sum.
first=$(head -n1 "$dir/SHA256SUMS")
printf '%064d  %s\n' 0 "${first#*  }" >"$work/SHA256SUMS"
if (cd "$dir" && sha256sum --check --strict --status "$work/SHA256SUMS"); then
  fail "sha256sum -c accepted a wrong sum for ${first#*  }"
fi
pass "sha256sum -c refuses a wrong sum"

[ -n "$native_bin" ] || fail "RELEASE_TARGETS has no binary for this machine ($native) to run"
out=$("$native_bin" --version)
case $out in
  "ccmesh $CCMESH_VERSION (commit "*", built "*")") pass "$native_bin --version: $out" ;;
  *) fail "$native_bin --version printed '$out', want 'ccmesh $CCMESH_VERSION (commit …, built …)'" ;;
esac
serve_check "$native_bin" "$CCMESH_VERSION" "$work"

done_ok
