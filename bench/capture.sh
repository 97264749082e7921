#!/usr/bin/env bash
# bench/capture.sh [ROUNDS]: what request capture costs (docs/BEHAVIOUR.md#capture-and-resend).
# Two headless ccmesh processes — capture "off" and capture "all" — pinned to
# core 1 in front of one bench/upstream on core 0; per round, in alternating
# order, loadgen's 1000 RPS test (64 connections, 5 s) against each. Prints
# p50, p99 and CPU per request per round. See bench/NOTES.md.
set -euo pipefail
rounds=${1:-3}
cd "$(dirname "$0")/.."
work=$(mktemp -d); trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
go build -o "$work/" ./bench/upstream ./bench/loadgen
CGO_ENABLED=0 go build -o "$work/ccmesh" .
taskset -c 0 "$work/upstream" -port-file "$work/up.addr" >/dev/null 2>&1 &
for _ in $(seq 50); do [ -s "$work/up.addr" ] && break; sleep 0.1; done
up=$(cat "$work/up.addr")
token=capture-bench-token-0123456789
declare -A url pid
for mode in off all; do
  port=$((20000 + RANDOM % 20000))
  taskset -c 1 "$work/ccmesh" --headless --listen "127.0.0.1:$port" --data "$work/data-$mode" \
    --admin-token "$token" --log-level error >/dev/null 2>&1 &
  pid[$mode]=$!; url[$mode]=http://127.0.0.1:$port
  for _ in $(seq 100); do curl -fs -o /dev/null -H "Authorization: Bearer $token" "${url[$mode]}/api/endpoints" && break; sleep 0.1; done
  curl -fsS -o /dev/null -H "Authorization: Bearer $token" -X PUT -d "{\"capture\":\"$mode\"}" "${url[$mode]}/api/settings"
  curl -fsS -o /dev/null -H "Authorization: Bearer $token" \
    -d "{\"name\":\"up\",\"base_url\":\"http://$up\",\"protocol\":\"anthropic\",\"api_key\":\"k-123456789\"}" "${url[$mode]}/api/endpoints"
done
echo "| round | capture | p50 µs | p99 µs | CPU µs/request |"
echo "|---:|---|---:|---:|---:|"
for r in $(seq "$rounds"); do
  order="off all"; [ $((r % 2)) -eq 0 ] && order="all off"
  for mode in $order; do
    line=$(taskset -c 0 "$work/loadgen" -url "${url[$mode]}/v1/messages" -label "$mode" -round "$r" \
      -pid "${pid[$mode]}" -mode rate -rps 1000 -c 64 -d 5s)
    echo "$line" | python3 -c 'import json,sys; d=json.load(sys.stdin); print("| %d | %s | %.0f | %.0f | %.0f |" % (d["round"], d["target"], d["p50_us"], d["p99_us"], d.get("cpu_per_req_us", 0)))'
  done
done
