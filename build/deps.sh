#!/usr/bin/env bash
# The Debian packages that `make test` needs beyond Go and Node.js; `make
# deps` (the first step of `make test`) runs this. As root it installs the
# missing ones; as anyone else it stops at once with the apt-get line that
# installs them, instead of letting a build fail deep inside.
#
#   build/deps.sh              check (and as root install) the list below
#   build/deps.sh PACKAGE...   the same for the named packages only
set -euo pipefail

packages=(
  chromium                                    # UI end-to-end tests (Playwright drives Debian's Chromium)
  build-essential pkg-config libgtk-3-dev     # desktop build (cgo, GTK)
  libwebkit2gtk-4.1-dev libayatana-appindicator3-dev
  xvfb xauth imagemagick x11-utils xdotool dbus-x11  # desktop test
  libglib2.0-bin                              # desktop test: gdbus drives the tray menu
  iproute2                                    # client tests: `ip link set lo up` inside `unshare --net`
  desktop-file-utils shellcheck curl          # package test (build/package/test-package.sh)
  git                                         # the Makefile's VERSION (git describe)
)
if [ $# -gt 0 ]; then
  packages=("$@")
fi

if ! command -v dpkg-query >/dev/null; then
  echo "deps: not a Debian system, so nothing is checked; make test needs these Debian packages or their equivalents: ${packages[*]}" >&2
  exit 0
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  {
    echo "deps: missing Debian packages: ${missing[*]}"
    echo "deps: install them as root, then run make test again:"
    echo "apt-get update && apt-get install -y --no-install-recommends ${missing[*]}"
  } >&2
  exit 1
fi

echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
