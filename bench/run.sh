#!/usr/bin/env bash
# bench/run.sh — ccmesh against a direct connection, a bare
# httputil.ReverseProxy and nginx, on the same fake upstream and load.
# `make bench` calls it; it writes docs/BENCHMARKS.md.
#
# Layout on a 2-core machine: every target (the proxies and, for "direct",
# a second upstream) runs pinned to core 1; the load generator and the
# upstream behind the proxies share core 0. Tests are interleaved: in each
# round every test runs against every target, in a rotating order, so
# drift in the machine's speed hits all targets alike.
#
# Environment: ROUNDS (default 5), BENCH_OUT (default docs/BENCHMARKS.md),
# KEEP_WORK=1 keeps the temp dir with every log and raw result.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
GO=${GO:-go}
ROUNDS=${ROUNDS:-5}
OUT=${BENCH_OUT:-$ROOT/docs/BENCHMARKS.md}
LOAD_CPU=0
SERVER_CPU=1
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ccmesh-bench.XXXXXX")
RESULTS=$WORK/results.jsonl
STARTED=$(date -u +%s)
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
PIDS=()

log() { printf '%s bench: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	if [[ -n ${KEEP_WORK:-} ]]; then log "raw results and logs kept in $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

for tool in taskset nginx wrk curl ss; do
	command -v "$tool" >/dev/null || die "$tool not found (apt-get install -y util-linux nginx wrk curl iproute2)"
done
(( $(nproc) >= 2 )) || die "needs 2 cores (targets on core $SERVER_CPU, load on core $LOAD_CPU)"

# spawn NAME CMD...: start CMD in the background, logging to $WORK/NAME.log;
# its pid is in LASTPID (taskset execs, so it is the server's own pid).
spawn() {
	local name=$1
	shift
	"$@" >"$WORK/$name.log" 2>&1 &
	LASTPID=$!
	PIDS+=("$LASTPID")
}

# wait_for CHECK...: retry CHECK for up to 10 s.
wait_for() {
	local i
	for i in $(seq 200); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.05
	done
	return 1
}

addr_of() { wait_for test -s "$1" || die "no address in $1"; cat "$1"; }

free_port() {
	local p
	for p in $(seq 38100 38999); do
		ss -Htln "sport = :$p" | grep -q . || { echo "$p"; return; }
	done
	die "no free port in 38100-38999"
}

rss_kb() { awk '/^VmRSS:/ {s += $2} END {print s + 0}' $(printf '/proc/%s/status ' ${1//,/ }); }

log "building into $WORK/bin"
mkdir -p "$WORK/bin"
$GO build -o "$WORK/bin/" ./bench/upstream ./bench/baseline ./bench/loadgen ./bench/logab ./bench/report
CGO_ENABLED=0 $GO build -trimpath -o "$WORK/bin/ccmesh" .
BIN=$WORK/bin

declare -A URL PID
spawn upstream taskset -c $LOAD_CPU "$BIN/upstream" -port-file "$WORK/upstream.addr"
UP=$(addr_of "$WORK/upstream.addr")

spawn direct taskset -c $SERVER_CPU "$BIN/upstream" -port-file "$WORK/direct.addr"
URL[direct]=http://$(addr_of "$WORK/direct.addr") PID[direct]=$LASTPID

spawn baseline taskset -c $SERVER_CPU "$BIN/baseline" -upstream "http://$UP" -port-file "$WORK/baseline.addr"
URL[baseline]=http://$(addr_of "$WORK/baseline.addr") PID[baseline]=$LASTPID

NGINX_PORT=$(free_port)
mkdir -p "$WORK/nginx"
sed -e "s|@PREFIX@|$WORK/nginx|g" -e "s|@LISTEN@|127.0.0.1:$NGINX_PORT|g" -e "s|@UPSTREAM@|$UP|g" \
	bench/nginx.conf.tmpl >"$WORK/nginx/nginx.conf"
spawn nginx taskset -c $SERVER_CPU nginx -p "$WORK/nginx/" -c "$WORK/nginx/nginx.conf" -e "$WORK/nginx/error.log"
NGINX_MASTER=$LASTPID
URL[nginx]=http://127.0.0.1:$NGINX_PORT
wait_for curl -fs -o /dev/null -d '{}' "${URL[nginx]}/v1/messages" || die "nginx did not start: $(cat "$WORK/nginx.log" "$WORK/nginx/error.log" 2>/dev/null)"
# The master and its worker(s): RSS and CPU are summed over all of them.
PID[nginx]=$(printf '%s,' "$NGINX_MASTER" $(pgrep -P "$NGINX_MASTER") | sed 's/,$//')

CCMESH_PORT=$(free_port)
TOKEN=bench-$(od -An -tx1 -N8 /dev/urandom | tr -d ' \n')
spawn ccmesh taskset -c $SERVER_CPU "$BIN/ccmesh" --headless --listen "127.0.0.1:$CCMESH_PORT" \
	--data "$WORK/ccmesh-data" --admin-token "$TOKEN"
URL[ccmesh]=http://127.0.0.1:$CCMESH_PORT PID[ccmesh]=$LASTPID
wait_for curl -fs -o /dev/null -H "Authorization: Bearer $TOKEN" "${URL[ccmesh]}/api/endpoints" ||
	die "ccmesh did not start: $(cat "$WORK/ccmesh.log")"
curl -fsS -o /dev/null -H "Authorization: Bearer $TOKEN" \
	-d "{\"name\":\"up\",\"base_url\":\"http://$UP\",\"protocol\":\"anthropic\",\"api_key\":\"k-123456789\"}" \
	"${URL[ccmesh]}/api/endpoints" || die "could not add the endpoint to ccmesh"

TARGETS=(direct baseline nginx ccmesh)
log "targets: $(for t in "${TARGETS[@]}"; do printf '%s=%s(pid %s) ' "$t" "${URL[$t]}" "${PID[$t]}"; done)"

# Idle RSS: started, configured, no proxy traffic yet.
for t in "${TARGETS[@]}"; do
	printf '{"mode":"idle","target":"%s","rss_end_kb":%s}\n' "$t" "$(rss_kb "${PID[$t]}")" >>"$RESULTS"
done

# lg TARGET ROUND LOADGEN-FLAGS...: one bounded run, one result line.
lg() {
	local t=$1 round=$2
	shift 2
	taskset -c $LOAD_CPU "$BIN/loadgen" -url "${URL[$t]}/v1/messages" -label "$t" -round "$round" \
		-pid "${PID[$t]}" "$@" >>"$RESULTS" || die "loadgen $* against $t failed"
}

TESTS=(
	"-mode latency -n 2000"
	"-mode rate -rps 1000 -c 64 -d 5s"
	"-mode wrk -c 64 -d 5s"
	"-mode sse -c 8 -r 4"
	"-mode sse -c 64 -r 2"
)
for round in $(seq "$ROUNDS"); do
	for test in "${TESTS[@]}"; do
		# Rotate the order each round and test.
		for i in "${!TARGETS[@]}"; do
			t=${TARGETS[$(((i + round) % ${#TARGETS[@]}))]}
			log "round $round/$ROUNDS: $t $test"
			# shellcheck disable=SC2086 # $test is a list of flags
			lg "$t" "$round" $test
		done
	done
done
for t in "${TARGETS[@]}"; do
	log "200 streams: $t"
	lg "$t" 0 -mode sse -c 200 -r 1
done
# What ccmesh spends its CPU on: perf over a wrk run at max RPS and over
# 64 concurrent streams (neither goes into the results).
# profile_ccmesh NAME LOADGEN-FLAGS...
profile_ccmesh() {
	local name=$1 perf
	shift
	perf record -q -F 999 -g -p "${PID[ccmesh]}" -o "$WORK/perf-$name.data" -- sleep 4 >"$WORK/perf-$name.log" 2>&1 &
	perf=$!
	taskset -c $LOAD_CPU "$BIN/loadgen" -url "${URL[ccmesh]}/v1/messages" -label "ccmesh-perf-$name" "$@" >/dev/null
	wait "$perf" || { log "perf record failed: $(cat "$WORK/perf-$name.log")"; return 0; }
	perf report -i "$WORK/perf-$name.data" --stdio --no-children --sort symbol --percent-limit 0.7 -g none 2>/dev/null |
		grep -v '^#' | grep -v '^$' | head -40 >"$WORK/perf-$name-flat.txt" || true
	# Cumulative, ccmesh's own code and what it calls into (kernel and Go
	# runtime frames are in the flat view).
	perf report -i "$WORK/perf-$name.data" --stdio --children --sort symbol --percent-limit 0.5 -g none 2>/dev/null |
		grep -E 'ccmesh|modernc|encoding/json|bufio|net/http\.\(\*(response|persistConn|Transport)' | head -45 >"$WORK/perf-$name-cum.txt" || true
}
if command -v perf >/dev/null; then
	log "perf profiles of ccmesh at max RPS and with 64 streams"
	profile_ccmesh max -mode wrk -c 64 -d 5s
	profile_ccmesh sse -mode sse -c 64 -r 14
fi
for t in "${TARGETS[@]}"; do
	printf '{"mode":"idle-after","target":"%s","rss_end_kb":%s}\n' "$t" "$(rss_kb "${PID[$t]}")" >>"$RESULTS"
done
# nginx: the master stops its workers.
for t in baseline nginx ccmesh direct; do kill "${PID[$t]%%,*}" 2>/dev/null || true; done

# Request logging off vs on: ccmesh has no switch, so bench/logab serves
# the same proxy package with a nil sink or with store's LogWriter.
mkdir -p "$WORK/logab-data"
spawn log-off taskset -c $SERVER_CPU "$BIN/logab" -log off -upstream "http://$UP" -port-file "$WORK/log-off.addr"
URL[log-off]=http://$(addr_of "$WORK/log-off.addr") PID[log-off]=$LASTPID
spawn log-on taskset -c $SERVER_CPU "$BIN/logab" -log on -data "$WORK/logab-data" -upstream "http://$UP" -port-file "$WORK/log-on.addr"
URL[log-on]=http://$(addr_of "$WORK/log-on.addr") PID[log-on]=$LASTPID
for round in $(seq "$ROUNDS"); do
	order=(log-off log-on)
	((round % 2)) || order=(log-on log-off)
	for t in "${order[@]}"; do
		log "round $round/$ROUNDS: $t 1000 rps"
		lg "$t" "$round" -mode rate -rps 1000 -c 64 -d 5s
	done
done
kill "${PID[log-off]}" "${PID[log-on]}" 2>/dev/null || true

log "Go micro-benchmarks (make bench-go)"
make --no-print-directory -s bench-go GO="$GO" >"$WORK/gobench.txt" 2>&1 || die "make bench-go failed: $(tail -20 "$WORK/gobench.txt")"

log "CPU profile of the proxy's benchmark"
$GO test -run '^$' -bench 'BenchmarkProxyNonStream$' -benchtime 3s -cpuprofile "$WORK/cpu.pprof" \
	-o "$WORK/proxy.test" ./proxy >"$WORK/profile-bench.txt" 2>&1 || die "profiling failed: $(tail "$WORK/profile-bench.txt")"
$GO tool pprof -top -nodecount 30 "$WORK/proxy.test" "$WORK/cpu.pprof" >"$WORK/pprof-top.txt" 2>/dev/null
$GO tool pprof -top -cum -nodecount 30 "$WORK/proxy.test" "$WORK/cpu.pprof" >"$WORK/pprof-cum.txt" 2>/dev/null

MACHINE="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr); $($GO version | cut -d' ' -f3); $(nginx -v 2>&1 | cut -d' ' -f3)"
"$BIN/report" -results "$RESULTS" -gobench "$WORK/gobench.txt" \
	-pprof-top "$WORK/pprof-top.txt" -pprof-cum "$WORK/pprof-cum.txt" -notes bench/NOTES.md \
	-perf-dir "$WORK" \
	-load "before: $LOAD_BEFORE; after: $(cut -d' ' -f1-3 /proc/loadavg)" \
	-machine "$MACHINE" -command "make bench  (bench/run.sh, ROUNDS=$ROUNDS)" \
	-duration "$(($(date -u +%s) - STARTED))s" -date "$(date -u '+%Y-%m-%d %H:%M UTC')" -out "$OUT"
log "wrote $OUT in $(($(date -u +%s) - STARTED)) s"
