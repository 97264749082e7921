#!/usr/bin/env bash
# bench/startup.sh BIN DATA_DIR: milliseconds from exec of a headless ccmesh to
# the first byte of its answer to GET /v1/models, for a start-up budget; one
# start, run it a few times (bench/extra.sh does). See bench/NOTES.md.
#
# The port is polled with bash's own /dev/tcp, as fast as it goes (no process
# per poll), so run this on another core than ccmesh's: CPU=N starts ccmesh
# pinned to core N (through taskset, whose exec the figure then includes).
# PORT picks the port (default: a random one in 20000-39999). Prints the
# figure (ms, 0.1 ms); exits 1 with the reason on stderr when ccmesh exits
# or has not answered within 10 s.
set -uo pipefail
bin=$1 data=$2 port=${PORT:-$((20000 + RANDOM % 20000))}
pin=()
[[ -z ${CPU:-} ]] || pin=(taskset -c "$CPU")
t0=$EPOCHREALTIME
"${pin[@]}" "$bin" --headless --listen "127.0.0.1:$port" --data "$data" \
	--admin-token startup-admin-token-0123 --log-level error >/dev/null 2>&1 &
pid=$!
fail() { echo "startup.sh: $*" >&2; kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; exit 1; }
# usec: a $EPOCHREALTIME value in µs.
usec() { echo $((10#${1/[.,]/})); }
limit=$(($(usec "$t0") + 10000000))
byte=
until [[ -n $byte ]]; do
	if { exec 3<>"/dev/tcp/127.0.0.1/$port"; } 2>/dev/null; then
		printf 'GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nConnection: close\r\n\r\n' "$port" >&3
		IFS= read -r -n 1 -t 5 byte <&3 || fail "connected to port $port, but no answer within 5 s"
		exec 3<&-
	fi
	[[ -n $byte ]] && break
	kill -0 "$pid" 2>/dev/null || fail "ccmesh exited before answering (port $port taken?)"
	(($(usec "$EPOCHREALTIME") < limit)) || fail "no answer on port $port within 10 s"
done
t1=$EPOCHREALTIME
kill -0 "$pid" 2>/dev/null || fail "ccmesh exited: port $port answered, but not by it"
kill "$pid"
wait "$pid" 2>/dev/null
us=$(($(usec "$t1") - $(usec "$t0")))
printf '%d.%d\n' $((us / 1000)) $((us % 1000 / 100))
