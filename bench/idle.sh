#!/usr/bin/env bash
# bench/idle.sh BIN [SECONDS]: CPU time and context switches (all threads) of a
# headless ccmesh over an idle period, after 3 s to start. See bench/NOTES.md.
set -euo pipefail
bin=$1; secs=${2:-60}
data=$(mktemp -d); port=$((20000 + RANDOM % 20000))
"$bin" --headless --listen 127.0.0.1:$port --data "$data" --admin-token idle-admin-token-0123456789 --log-level error & pid=$!
sleep 3
snap() {
  read -r -a st < /proc/$pid/stat
  cs=0; for f in /proc/$pid/task/*/status; do v=$(awk '/^(voluntary|nonvoluntary)_ctxt_switches/ {s+=$2} END {print s}' "$f"); cs=$((cs+v)); done
  echo "$((st[13]+st[14])) $cs"
}
read -r t0 c0 < <(snap); sleep "$secs"; read -r t1 c1 < <(snap)
kill $pid; wait $pid 2>/dev/null || true; rm -rf "$data"
echo "idle ${secs}s: cpu $(( (t1-t0)*10 )) ms, context switches $((c1-c0))"
