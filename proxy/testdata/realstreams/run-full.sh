#!/bin/sh
# Replays a full corpus of recorded streams (laid out as anthropic/, chat/,
# responses/ of *.chunks.txt) through ccmesh to every client protocol, and
# prints cases passed / cases for the committed reductions and for DIR.
# Usage: proxy/testdata/realstreams/run-full.sh DIR [go test flags]
set -eu
dir=${1:?usage: $0 DIR [go test flags]}
shift
cd "$(dirname "$0")/../../.."
CCMESH_REALSTREAMS=$(cd "$dir" && pwd) go test -count=1 -v -run '^TestRealStreams$' "$@" ./proxy |
	grep -E 'recordings;|failed: |^(ok|FAIL|---)' || true
