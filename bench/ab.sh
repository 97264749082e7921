#!/usr/bin/env bash
# bench/ab.sh: a quick A/B of ccmesh builds, log modes or the held baseline,
# pinned like `make bench` (targets on core 1, load and upstream on core 0),
# every test against every target in a rotating order for ROUNDS rounds.
# It prints, per test and target, the median over rounds of (target −
# direct) and the CPU per request (bench/absum); bench/NOTES.md quotes it.
#
#   bench/ab.sh ROUNDS 'LOADGEN FLAGS' ['LOADGEN FLAGS'...]
#
# The variants are in AB_VARIANTS, space-separated NAME=KIND:...
#   NAME=ccmesh:BINARY          a ccmesh binary, headless, one endpoint
#   NAME=logab:BINARY:MODE[:N]  bench/logab (BINARY "-": built from this
#                               tree), -log MODE, -batch N
#   NAME=held                   bench/baseline -hold-prelude
#   NAME=tr:BINARY:API          a ccmesh binary, headless, whose one endpoint
#                               speaks openai-chat: translation from API
#                               (anthropic, responses or gemini), as make
#                               bench's tr-* targets
# direct (the upstream itself) and baseline always run; with a tr variant,
# direct-chat too (the Chat request straight to the upstream), which the
# tr variants' added figures are taken against. Example:
#   AB_VARIANTS="old=ccmesh:/tmp/ccmesh-old new=ccmesh:/tmp/ccmesh-new off=logab:-:off" \
#     bench/ab.sh 5 '-mode latency -n 2000' '-mode rate -rps 1000 -c 64 -d 5s'
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
# shellcheck source=bench/lib.sh
source bench/lib.sh
(($# >= 2)) || die "usage: bench/ab.sh ROUNDS 'LOADGEN FLAGS'..."
ROUNDS=$1
shift
GO=${GO:-go}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ccmesh-ab.XXXXXX")
PIDS=()
trap 'kill "${PIDS[@]}" 2>/dev/null || true; wait 2>/dev/null || true; [[ -n ${KEEP_WORK:-} ]] || rm -rf "$WORK"' EXIT
$GO build -o "$WORK/bin/" ./bench/upstream ./bench/baseline ./bench/loadgen ./bench/logab ./bench/absum
BIN=$WORK/bin

start() { # NAME CMD...: start CMD pinned to core 1 (core 0 for the upstream)
	local name=$1
	shift
	"$@" >"$WORK/$name.log" 2>&1 &
	PIDS+=("$!")
	LASTPID=$!
}
addr_of() { wait_for test -s "$1" || die "no address in $1"; cat "$1"; }

declare -A URL PID PATH_OF FLAGS
CHAT=() # the tr variants
start upstream taskset -c 0 "$BIN/upstream" -port-file "$WORK/upstream.addr"
UP=$(addr_of "$WORK/upstream.addr")
start direct taskset -c 1 "$BIN/upstream" -port-file "$WORK/direct.addr"
URL[direct]=http://$(addr_of "$WORK/direct.addr") PID[direct]=$LASTPID
start baseline taskset -c 1 "$BIN/baseline" -upstream "http://$UP" -port-file "$WORK/baseline.addr"
URL[baseline]=http://$(addr_of "$WORK/baseline.addr") PID[baseline]=$LASTPID
TARGETS=(direct baseline)
TOKEN=ab-$(od -An -tx1 -N8 /dev/urandom | tr -d ' \n')
for v in ${AB_VARIANTS:-}; do
	name=${v%%=*}
	IFS=: read -r kind a b c <<<"${v#*=}"
	case $kind in
	ccmesh | tr)
		port=$(free_port)
		start "$name" taskset -c 1 "$a" --headless --listen "127.0.0.1:$port" --data "$WORK/$name-data" --admin-token "$TOKEN"
		URL[$name]=http://127.0.0.1:$port
		wait_for curl -fs -o /dev/null -H "Authorization: Bearer $TOKEN" "${URL[$name]}/api/endpoints" ||
			die "$name did not start: $(cat "$WORK/$name.log")"
		ep="{\"name\":\"up\",\"base_url\":\"http://$UP\",\"protocol\":\"anthropic\",\"api_key\":\"k-123456789\"}"
		if [[ $kind == tr ]]; then
			ep="{\"name\":\"chat\",\"base_url\":\"http://$UP\",\"protocol\":\"openai-chat\",\"api_key\":\"k-123456789\",\"models\":[\"claude-*\",\"gpt-*\",\"gemini-*\"]}"
			case $b in
			anthropic) FLAGS[$name]="-upstream chat" ;;
			responses) PATH_OF[$name]=/v1/responses FLAGS[$name]="-api responses -upstream chat -model gpt-5-bench" ;;
			gemini) PATH_OF[$name]=/v1beta FLAGS[$name]="-api gemini -upstream chat -model gemini-bench" ;;
			*) die "variant $v: API $b is not anthropic, responses or gemini" ;;
			esac
			CHAT+=("$name")
		fi
		curl -fsS -o /dev/null -H "Authorization: Bearer $TOKEN" -d "$ep" "${URL[$name]}/api/endpoints"
		;;
	logab)
		[[ $a == - ]] && a=$BIN/logab
		mkdir -p "$WORK/$name-data"
		start "$name" taskset -c 1 "$a" -log "$b" -batch "${c:-0}" -data "$WORK/$name-data" \
			-upstream "http://$UP" -port-file "$WORK/$name.addr"
		URL[$name]=http://$(addr_of "$WORK/$name.addr")
		;;
	held)
		start "$name" taskset -c 1 "$BIN/baseline" -hold-prelude -upstream "http://$UP" -port-file "$WORK/$name.addr"
		URL[$name]=http://$(addr_of "$WORK/$name.addr")
		;;
	*) die "variant $v: kind $kind is not ccmesh, tr, logab or held" ;;
	esac
	PID[$name]=$LASTPID
	TARGETS+=("$name")
done
if ((${#CHAT[@]})); then
	URL[direct-chat]=${URL[direct]} PID[direct-chat]=${PID[direct]}
	PATH_OF[direct-chat]=/v1/chat/completions FLAGS[direct-chat]="-api chat -upstream chat"
	TARGETS+=(direct-chat)
fi
for round in $(seq "$ROUNDS"); do
	for test in "$@"; do
		for i in "${!TARGETS[@]}"; do
			t=${TARGETS[$(((i + round) % ${#TARGETS[@]}))]}
			log "round $round/$ROUNDS: $t $test"
			# shellcheck disable=SC2086 # $test and FLAGS[$t] are lists of flags
			taskset -c 0 "$BIN/loadgen" -url "${URL[$t]}${PATH_OF[$t]:-/v1/messages}" -label "$t" -round "$round" -test "$test" \
				-pid "${PID[$t]}" ${FLAGS[$t]:-} $test >>"$WORK/results.jsonl"
		done
	done
done
"$BIN/absum" -chat "$(IFS=,; echo "${CHAT[*]}")" "$WORK/results.jsonl"
