#!/usr/bin/env bash
# bench/extra.sh WORK_DIR — the phase of `make bench` that times ccmesh
# itself rather than its proxying (bench/NOTES.md, "Start-up, idle cost and
# the admin API at size"):
#   1. a data dir filled by bench/filldb (50 000 request log rows over 30
#      days, four endpoints), made once;
#   2. start-up to the first byte served (bench/startup.sh), STARTS times
#      each with a new empty data dir and with the filled one, alternating;
#   3. the admin API calls of the dashboard, Stats and Logs tabs on the
#      filled data dir (bench/apiload), API_CALLS calls of each kind;
#   4. idle cost over IDLE_SECS (bench/idle.sh) of the headless binary and
#      of the desktop one with its window hidden, on the filled data dir.
# bench/run.sh runs it after the load rounds. It appends result lines to
# WORK_DIR/results.jsonl (bench/report reads them) and keeps the raw
# outputs and logs in WORK_DIR/extra/. On its own:
#   IDLE_SECS=5 STARTS=5 API_CALLS=20 bench/extra.sh /tmp/extra
#   go run ./bench/report -results /tmp/extra/results.jsonl -out /tmp/extra/report.md
#
# Environment: STARTS (default 7), API_CALLS (100), IDLE_SECS (60),
# FILL_ROWS (50000), FILL_DAYS (30); BIN, a directory that holds ccmesh,
# filldb and apiload built (default: built into WORK_DIR/bin); DESKTOP_BIN
# (default bin/ccmesh-desktop), measured if it exists; BUILD_DESKTOP=1 runs
# `make desktop` first. Without a desktop binary (or Xvfb, dbus-run-session)
# its idle cost is left out, with the reason in the results.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
. bench/lib.sh
[[ $# -eq 1 ]] || die "usage: bench/extra.sh WORK_DIR"
mkdir -p "$1"
WORK=$(cd "$1" && pwd)
GO=${GO:-go}
STARTS=${STARTS:-7}
API_CALLS=${API_CALLS:-100}
IDLE_SECS=${IDLE_SECS:-60}
FILL_ROWS=${FILL_ROWS:-50000}
FILL_DAYS=${FILL_DAYS:-30}
DESKTOP_BIN=${DESKTOP_BIN:-$ROOT/bin/ccmesh-desktop}
LOAD_CPU=0
SERVER_CPU=1
RESULTS=$WORK/results.jsonl
OUT=$WORK/extra
API_PID=

cleanup() {
	[[ -z $API_PID ]] || kill "$API_PID" 2>/dev/null || true
	wait 2>/dev/null || true
}
trap cleanup EXIT

for tool in taskset curl ss; do
	command -v "$tool" >/dev/null || die "$tool not found (apt-get install -y util-linux curl iproute2)"
done
(($(nproc) >= 2)) || die "needs 2 cores (ccmesh on core $SERVER_CPU, the clients on core $LOAD_CPU)"
rm -rf "$OUT"
mkdir -p "$OUT"

# Given BIN (bench/run.sh's), only what it lacks is built.
if [[ -z ${BIN:-} || ! -x $BIN/ccmesh ]]; then
	BIN=${BIN:-$WORK/bin}
	log "building ccmesh into $BIN"
	mkdir -p "$BIN"
	CGO_ENABLED=0 $GO build -trimpath -o "$BIN/ccmesh" .
	rm -f "$BIN/filldb" "$BIN/apiload"
fi
if [[ ! -x $BIN/filldb || ! -x $BIN/apiload ]]; then
	$GO build -o "$BIN/" ./bench/filldb ./bench/apiload
fi

emit() { printf '%s\n' "$1" >>"$RESULTS"; }

log "filling a data dir: $FILL_ROWS request log rows over $FILL_DAYS days"
FILLED=$OUT/filled-data
"$BIN/filldb" -data "$FILLED" -rows "$FILL_ROWS" -days "$FILL_DAYS" >"$OUT/filldb.jsonl" 2>"$OUT/filldb.log" ||
	die "filldb failed: $(tail -5 "$OUT/filldb.log")"
cat "$OUT/filldb.jsonl" >>"$RESULTS"

# Start-up: the poller on the load core, ccmesh on its own.
for round in $(seq "$STARTS"); do
	order=(empty filled)
	((round % 2)) || order=(filled empty)
	for kind in "${order[@]}"; do
		dir=$FILLED
		[[ $kind == filled ]] || dir=$(mktemp -d "$OUT/empty-data.XXXXXX")
		if ms=$(PORT=$(free_port) CPU=$SERVER_CPU taskset -c $LOAD_CPU bench/startup.sh "$BIN/ccmesh" "$dir" 2>"$OUT/startup.err"); then
			log "start-up $round/$STARTS, $kind data dir: $ms ms"
			emit "{\"mode\":\"startup\",\"target\":\"$kind\",\"round\":$round,\"startup_ms\":$ms}"
		else
			log "start-up $round/$STARTS, $kind data dir failed: $(cat "$OUT/startup.err")"
			emit "{\"mode\":\"startup\",\"target\":\"$kind\",\"round\":$round,\"errors\":1,\"error_example\":\"$(oneline <"$OUT/startup.err")\"}"
		fi
		cat "$OUT/startup.err" >>"$OUT/startup.log"
		[[ $kind == filled ]] || rm -rf "$dir"
	done
done
rm -f "$OUT/startup.err"

log "admin API on the filled data dir: $API_CALLS calls of each kind"
API_PORT=$(free_port)
TOKEN=bench-$(od -An -tx1 -N8 /dev/urandom | tr -d ' \n')
taskset -c $SERVER_CPU "$BIN/ccmesh" --headless --listen "127.0.0.1:$API_PORT" --data "$FILLED" \
	--admin-token "$TOKEN" >"$OUT/ccmesh-api.log" 2>&1 &
API_PID=$!
wait_for curl -fs -o /dev/null -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$API_PORT/api/info" ||
	die "ccmesh did not start on the filled data dir: $(tail -5 "$OUT/ccmesh-api.log")"
taskset -c $LOAD_CPU "$BIN/apiload" -url "http://127.0.0.1:$API_PORT" -token "$TOKEN" -n "$API_CALLS" \
	>"$OUT/apiload.jsonl" 2>"$OUT/apiload.log" || die "apiload failed: $(tail -5 "$OUT/apiload.log")"
cat "$OUT/apiload.jsonl" >>"$RESULTS"
kill "$API_PID"
wait "$API_PID" 2>/dev/null || true
API_PID=

# idle BUILD DETAIL IDLE-ARGS...: one idle.sh run, one result line (or
# a "skipped" one with the reason).
idle() {
	local build=$1 detail=$2 out
	shift 2
	log "idle cost, $build: $IDLE_SECS s"
	if out=$(DATA=$FILLED bench/idle.sh "$@" "$IDLE_SECS" 2>"$OUT/idle-$build.log"); then
		log "idle cost, $build: $out"
		emit "{\"mode\":\"idle-cost\",\"target\":\"$build\",\"binary\":\"$detail\",${out#\{}"
	else
		emit "{\"mode\":\"skipped\",\"target\":\"idle-$build\",\"error_example\":\"idle.sh failed: $(tail -3 "$OUT/idle-$build.log" | oneline)\"}"
	fi
}
idle headless "built by this run" "$BIN/ccmesh"

skip=""
if [[ -n ${BUILD_DESKTOP:-} ]]; then
	log "building the desktop binary (make desktop)"
	DESKTOP_BIN=$ROOT/bin/ccmesh-desktop
	make --no-print-directory desktop GO="$GO" >"$OUT/make-desktop.log" 2>&1 ||
		skip="make desktop failed: $(tail -3 "$OUT/make-desktop.log" | oneline)"
fi
for tool in Xvfb dbus-run-session; do
	command -v "$tool" >/dev/null || skip="$tool not found (the packages are in README)"
done
[[ -n $skip || -x $DESKTOP_BIN ]] || skip="no desktop binary at $DESKTOP_BIN (BUILD_DESKTOP=1 builds it with make desktop)"
if [[ -z $skip ]]; then
	detail="built by this run"
	[[ -n ${BUILD_DESKTOP:-} ]] || detail="$(basename "$DESKTOP_BIN") of $(date -u -r "$DESKTOP_BIN" '+%Y-%m-%d %H:%M UTC'), not rebuilt by this run"
	idle desktop "$detail" -d "$DESKTOP_BIN"
else
	log "desktop idle cost left out: $skip"
	emit "{\"mode\":\"skipped\",\"target\":\"idle-desktop\",\"error_example\":\"$skip\"}"
fi
