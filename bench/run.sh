#!/usr/bin/env bash
# bench/run.sh — ccmesh against a direct connection, a bare
# httputil.ReverseProxy and nginx, on the same fake upstream and load; and
# ccmesh translating (docs/BEHAVIOUR.md#translation) Claude, Responses and
# Gemini requests for a Chat Completions upstream, against its own
# pass-through and claude-code-router (bench/NOTES.md); then start-up, idle
# cost and the admin API on a filled database (bench/extra.sh, which runs
# on its own too). `make bench` calls it; it writes docs/BENCHMARKS.md.
#
# Layout on a 2-core machine: every target (the proxies and, for "direct",
# a second upstream) runs pinned to core 1; the load generator and the
# upstream behind the proxies share core 0. Tests are interleaved: in each
# round every test runs against every target, in a rotating order, so
# drift in the machine's speed hits all targets alike.
#
# Environment: ROUNDS (default 5), BENCH_OUT (default docs/BENCHMARKS.md),
# KEEP_WORK=1 keeps the temp dir with every log and raw result. node and
# npm are needed for claude-code-router only; without them its figures are
# "no data", with the reason in the report. bench/extra.sh's variables
# (IDLE_SECS, STARTS, API_CALLS, BUILD_DESKTOP, ...) pass through.
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

. bench/lib.sh

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

addr_of() { wait_for test -s "$1" || die "no address in $1"; cat "$1"; }

# rss_kb PID[,PID...]: VmRSS summed, KiB.
rss_kb() {
	local p pids files=()
	IFS=, read -r -a pids <<<"$1"
	for p in "${pids[@]}"; do files+=("/proc/$p/status"); done
	awk '/^VmRSS:/ {s += $2} END {print s + 0}' "${files[@]}"
}

log "building into $WORK/bin"
mkdir -p "$WORK/bin"
$GO build -o "$WORK/bin/" ./bench/upstream ./bench/baseline ./bench/loadgen ./bench/logab ./bench/report \
	./bench/filldb ./bench/apiload
CGO_ENABLED=0 $GO build -trimpath -o "$WORK/bin/ccmesh" .
BIN=$WORK/bin

declare -A URL PID
spawn upstream taskset -c $LOAD_CPU "$BIN/upstream" -port-file "$WORK/upstream.addr"
UP=$(addr_of "$WORK/upstream.addr")

spawn direct taskset -c $SERVER_CPU "$BIN/upstream" -port-file "$WORK/direct.addr"
URL[direct]=http://$(addr_of "$WORK/direct.addr") PID[direct]=$LASTPID

spawn baseline taskset -c $SERVER_CPU "$BIN/baseline" -upstream "http://$UP" -port-file "$WORK/baseline.addr"
URL[baseline]=http://$(addr_of "$WORK/baseline.addr") PID[baseline]=$LASTPID

# held: the same bare ReverseProxy holding a stream's first event and the
# header until its second event, as ccmesh does (streams only): what the
# prelude hold costs by itself, with nothing else of ccmesh.
spawn held taskset -c $SERVER_CPU "$BIN/baseline" -hold-prelude -upstream "http://$UP" -port-file "$WORK/held.addr"
URL[held]=http://$(addr_of "$WORK/held.addr") PID[held]=$LASTPID

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

# Translation (docs/BEHAVIOUR.md#translation): a second ccmesh, whose one
# endpoint speaks openai-chat and names the models the load generator
# sends (claude-* for Claude requests, gpt-* for Responses ones, gemini-*
# in a Gemini request's path), in front of the same upstream's
# /v1/chat/completions. A second process, so that the pass-through ccmesh
# above keeps its one endpoint.
CCMESH_TR_PORT=$(free_port)
spawn ccmesh-tr taskset -c $SERVER_CPU "$BIN/ccmesh" --headless --listen "127.0.0.1:$CCMESH_TR_PORT" \
	--data "$WORK/ccmesh-tr-data" --admin-token "$TOKEN"
CCMESH_TR_PID=$LASTPID
wait_for curl -fs -o /dev/null -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$CCMESH_TR_PORT/api/endpoints" ||
	die "ccmesh-tr did not start: $(cat "$WORK/ccmesh-tr.log")"
curl -fsS -o /dev/null -H "Authorization: Bearer $TOKEN" \
	-d "{\"name\":\"chat\",\"base_url\":\"http://$UP\",\"protocol\":\"openai-chat\",\"api_key\":\"k-123456789\",\"models\":[\"claude-*\",\"gpt-*\",\"gemini-*\"]}" \
	"http://127.0.0.1:$CCMESH_TR_PORT/api/endpoints" || die "could not add the chat endpoint to ccmesh-tr"

# A target is a URL, the process(es) to sample, the path (default
# /v1/messages) and loadgen flags: the client's protocol and the upstream's.
declare -A PATH_OF FLAGS
# direct-chat: the Chat request straight to the second upstream, the
# reference the translated targets' added latency is taken against; it
# runs right after direct, so that the two references share the moment.
URL[direct-chat]=${URL[direct]} PID[direct-chat]=${PID[direct]}
PATH_OF[direct-chat]=/v1/chat/completions FLAGS[direct-chat]="-api chat -upstream chat"
URL[tr-claude]=http://127.0.0.1:$CCMESH_TR_PORT PID[tr-claude]=$CCMESH_TR_PID FLAGS[tr-claude]="-upstream chat"
URL[tr-responses]=${URL[tr-claude]} PID[tr-responses]=$CCMESH_TR_PID
PATH_OF[tr-responses]=/v1/responses FLAGS[tr-responses]="-api responses -upstream chat -model gpt-5-bench"
# tr-gemini: a Gemini client (Gemini CLI's generateContent); loadgen puts
# the model and the method after the version (bench/loadgen, geminiURL).
URL[tr-gemini]=${URL[tr-claude]} PID[tr-gemini]=$CCMESH_TR_PID
PATH_OF[tr-gemini]=/v1beta FLAGS[tr-gemini]="-api gemini -upstream chat -model gemini-bench"
TR_TARGETS=(tr-claude tr-responses tr-gemini) # c=1 and 1000 RPS
TR_SSE=(tr-claude tr-gemini)                  # streams

# claude-code-router, Claude→Chat (bench/NOTES.md): the version pinned in
# bench/ccr/package-lock.json, configured offline through its config file
# in a temporary HOME with one provider, this upstream's Chat Completions
# URL. `ccr start` serves in the foreground (pid = the node process).
CCR_SKIP=""
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	CCR_SKIP="node or npm not found"
elif [[ ! bench/ccr/node_modules/.installed -nt bench/ccr/package-lock.json ]]; then
	log "installing claude-code-router into bench/ccr"
	if (cd bench/ccr && npm ci --no-audit --no-fund) >"$WORK/ccr-install.log" 2>&1; then
		touch bench/ccr/node_modules/.installed
	else
		CCR_SKIP="npm ci in bench/ccr failed: $(tail -3 "$WORK/ccr-install.log" | oneline)"
	fi
fi
if [[ -z $CCR_SKIP ]]; then
	CCR_PORT=$(free_port)
	mkdir -p "$WORK/ccr-home/.claude-code-router"
	# LOG false: its per-request debug log to a file is off, its fastest setting.
	cat >"$WORK/ccr-home/.claude-code-router/config.json" <<-EOF
		{"PORT": $CCR_PORT, "HOST": "127.0.0.1", "LOG": false,
		 "Providers": [{"name": "bench", "api_base_url": "http://$UP/v1/chat/completions",
		   "api_key": "k-123456789", "models": ["claude-sonnet-4-5"]}],
		 "Router": {"default": "bench,claude-sonnet-4-5"}}
	EOF
	spawn ccr taskset -c $SERVER_CPU env HOME="$WORK/ccr-home" node \
		"$ROOT/bench/ccr/node_modules/@musistudio/claude-code-router/dist/cli.js" start
	URL[ccr]=http://127.0.0.1:$CCR_PORT PID[ccr]=$LASTPID FLAGS[ccr]="-upstream chat"
	ccr_answers() {
		curl -fs -o /dev/null -H 'content-type: application/json' -H 'anthropic-version: 2023-06-01' \
			-d '{"model":"claude-sonnet-4-5","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}' "${URL[ccr]}/v1/messages"
	}
	# Node may take a few seconds to load it on a busy core: up to 30 s.
	if wait_for ccr_answers || wait_for ccr_answers || wait_for ccr_answers; then
		TR_TARGETS+=(ccr) TR_SSE+=(ccr)
	else
		CCR_SKIP="claude-code-router did not answer on ${URL[ccr]}/v1/messages: $(tail -5 "$WORK/ccr.log" | oneline)"
	fi
fi
if [[ -n $CCR_SKIP ]]; then
	log "claude-code-router left out: $CCR_SKIP"
	printf '{"mode":"skipped","target":"ccr","error_example":"%s"}\n' "$CCR_SKIP" >>"$RESULTS"
fi

TARGETS=(direct baseline nginx ccmesh)
log "targets: $(for t in "${TARGETS[@]}" direct-chat "${TR_TARGETS[@]}"; do printf '%s=%s%s(pid %s) ' "$t" "${URL[$t]}" "${PATH_OF[$t]:-}" "${PID[$t]}"; done)"

# Idle RSS: started, configured, no proxy traffic yet.
for t in "${TARGETS[@]}" direct-chat "${TR_TARGETS[@]}"; do
	printf '{"mode":"idle","target":"%s","rss_end_kb":%s}\n' "$t" "$(rss_kb "${PID[$t]}")" >>"$RESULTS"
done

# lg TARGET ROUND LOADGEN-FLAGS...: one bounded run, one result line.
lg() {
	local t=$1 round=$2
	shift 2
	# shellcheck disable=SC2086 # FLAGS[$t] is a list of flags
	taskset -c $LOAD_CPU "$BIN/loadgen" -url "${URL[$t]}${PATH_OF[$t]:-/v1/messages}" -label "$t" -round "$round" \
		-pid "${PID[$t]}" ${FLAGS[$t]:-} "$@" >>"$RESULTS" || die "loadgen $* against $t failed"
}

# Each test: loadgen flags | which translation targets join the four.
TESTS=(
	"-mode latency -n 2000|tr"
	"-mode rate -rps 1000 -c 64 -d 5s|tr"
	"-mode wrk -c 64 -d 5s|"
	"-mode sse -c 8 -r 4|tr-sse"
	"-mode sse -c 64 -r 2|tr-sse"
)
for round in $(seq "$ROUNDS"); do
	for spec in "${TESTS[@]}"; do
		test=${spec%|*}
		# Units of the rotation; "direct direct-chat" runs back to back.
		ts=("${TARGETS[@]}")
		case ${spec#*|} in
		tr) ts=("direct direct-chat" "${TARGETS[@]:1}" "${TR_TARGETS[@]}") ;;
		tr-sse) ts=("direct direct-chat" "${TARGETS[@]:1}" held "${TR_SSE[@]}") ;;
		esac
		# Rotate the order each round and test.
		for i in "${!ts[@]}"; do
			for t in ${ts[$(((i + round) % ${#ts[@]}))]}; do
				log "round $round/$ROUNDS: $t $test"
				# shellcheck disable=SC2086 # $test is a list of flags
				lg "$t" "$round" $test
			done
		done
	done
done
for t in "${TARGETS[@]}"; do
	log "200 streams: $t"
	lg "$t" 0 -mode sse -c 200 -r 1
done
# What ccmesh spends its CPU on: perf over a wrk run at max RPS and over
# 64 concurrent streams, passing through and translating Claude→Chat
# (none goes into the results).
# profile_ccmesh NAME TARGET LOADGEN-FLAGS...
profile_ccmesh() {
	local name=$1 t=$2 perf
	shift 2
	perf record -q -F 999 -g -p "${PID[$t]}" -o "$WORK/perf-$name.data" -- sleep 4 >"$WORK/perf-$name.log" 2>&1 &
	perf=$!
	# shellcheck disable=SC2086 # FLAGS[$t] is a list of flags
	taskset -c $LOAD_CPU "$BIN/loadgen" -url "${URL[$t]}${PATH_OF[$t]:-/v1/messages}" -label "$t-perf-$name" ${FLAGS[$t]:-} "$@" >/dev/null
	wait "$perf" || { log "perf record failed: $(cat "$WORK/perf-$name.log")"; return 0; }
	perf report -i "$WORK/perf-$name.data" --stdio --no-children --sort symbol --percent-limit 0.7 -g none 2>/dev/null |
		grep -v '^#' | grep -v '^$' | head -40 >"$WORK/perf-$name-flat.txt" || true
	# Cumulative, ccmesh's own code and what it calls into (kernel and Go
	# runtime frames are in the flat view).
	perf report -i "$WORK/perf-$name.data" --stdio --children --sort symbol --percent-limit 0.5 -g none 2>/dev/null |
		grep -E 'ccmesh|modernc|encoding/json|bufio|net/http\.\(\*(response|persistConn|Transport)' | head -45 >"$WORK/perf-$name-cum.txt" || true
}
if command -v perf >/dev/null; then
	log "perf profiles of ccmesh at max RPS and with 64 streams, passing through and translating"
	profile_ccmesh max ccmesh -mode wrk -c 64 -d 5s
	profile_ccmesh sse ccmesh -mode sse -c 64 -r 14
	profile_ccmesh tr-max tr-claude -mode wrk -c 64 -d 5s
	profile_ccmesh tr-sse tr-claude -mode sse -c 64 -r 14
fi
for t in "${TARGETS[@]}" direct-chat "${TR_TARGETS[@]}"; do
	printf '{"mode":"idle-after","target":"%s","rss_end_kb":%s}\n' "$t" "$(rss_kb "${PID[$t]}")" >>"$RESULTS"
done

# 200 streams held open at once: an upstream that sends 40 events 100 ms
# apart (4 s a stream), behind ccmesh translating (Claude→Chat) and, the
# same load, passing through (Claude→Anthropic). Each ccmesh's one
# endpoint (id 1, the first of a fresh data dir) is pointed at it.
spawn upstream-slow taskset -c $LOAD_CPU "$BIN/upstream" -events 40 -interval 100ms -port-file "$WORK/upstream-slow.addr"
PID[upstream-slow]=$LASTPID SLOW=$(addr_of "$WORK/upstream-slow.addr")
for t in tr-claude ccmesh; do
	curl -fsS -o /dev/null -X PUT -H "Authorization: Bearer $TOKEN" -d "{\"base_url\":\"http://$SLOW\"}" \
		"${URL[$t]}/api/endpoints/1" || die "could not point $t at the slow upstream"
	log "200 slow streams: $t"
	lg "$t" 0 -mode sse -c 200 -r 1 -events 40 -interval 100ms -test sse200slow
done

# nginx: the master stops its workers.
for t in baseline nginx ccmesh direct tr-claude upstream-slow; do kill "${PID[$t]%%,*}" 2>/dev/null || true; done
[[ -n $CCR_SKIP ]] || kill "${PID[ccr]}" 2>/dev/null || true

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

# ccmesh alone: start-up, idle cost and the admin API at size; result lines
# into $RESULTS, raw outputs into $WORK/extra. Should it fail, the report
# still gets the rounds above, and its rows say why they have no data.
log "start-up, idle cost and the admin API at size (bench/extra.sh)"
if ! BIN=$BIN GO=$GO bench/extra.sh "$WORK" 2>&1 | tee "$WORK/extra.log" >&2; then
	log "bench/extra.sh failed; its rows will say so"
	printf '{"mode":"skipped","target":"extra","error_example":"bench/extra.sh failed: %s"}\n' \
		"$({ grep -m1 'bench: error: ' "$WORK/extra.log" || tail -1 "$WORK/extra.log"; } | oneline)" >>"$RESULTS"
fi

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
