#!/usr/bin/env bash
# bench/idle.sh [-d] BIN [SECONDS]: CPU time and context switches of an idle
# ccmesh over SECONDS (default 60), counted from SETTLE seconds after it first
# answers /api/info (default 3; 10 with -d, for WebKit to load the hidden
# page). Nothing talks to it meanwhile. See bench/NOTES.md.
#
# -d: BIN is the desktop build, started with --minimized (the window hidden,
# the tray only) under an Xvfb and a D-Bus session of its own
# (dbus-run-session), as `make test-desktop` runs it; its WebKit processes
# are its children and count with it.
# DATA=DIR runs on that data dir (default: a new one, removed afterwards).
#
# Prints one JSON object (for bench/extra.sh): over the process and its
# children, all threads, cpu_ms is sched_ms (on-CPU ns from
# /proc/PID/task/*/schedstat: precise, but blind to threads that exited
# during the period) when every thread of the first snapshot is still
# there at the end (exited 0), else the larger of sched_ms and ticks_ms
# (utime+stime from /proc/PID/stat: every thread, but in 10 ms ticks, so
# two wake-ups can read as 20 ms); ctx_switches sums voluntary and involuntary
# switches of the threads; main_* are the ccmesh process's own, and
# main_threads splits its on-CPU time by thread: "main" (the process's first
# thread: the Go main goroutine and, in the desktop build, GTK's main loop),
# "go" (the other threads named after the binary: the Go runtime's), and
# each other name (threads GLib and WebKit start and name themselves).
set -euo pipefail
desktop=
if [[ ${1:-} == -d ]]; then
	desktop=1
	shift
fi
bin=$1 secs=${2:-60}
settle=${SETTLE:-$([[ -n $desktop ]] && echo 10 || echo 3)}
port=${PORT:-$((20000 + RANDOM % 20000))}
token=idle-admin-token-0123456789
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ccmesh-idle.XXXXXX")
data=${DATA:-$tmp/data}
pid='' session='' xvfb=''

cleanup() {
	local p
	# Under -d, dbus-run-session ends when ccmesh does, stopping its bus
	# (killed itself, it would leave the bus behind).
	[[ -z $pid ]] || kill "$pid" 2>/dev/null || true
	for p in $session $pid; do
		for _ in $(seq 200); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.05
		done
		kill -9 "$p" 2>/dev/null || true
	done
	[[ -z $xvfb ]] || kill "$xvfb" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
	echo "idle.sh: $*" >&2
	[[ ! -s $tmp/out.log ]] || tail -5 "$tmp/out.log" >&2
	exit 1
}

args=(--listen "127.0.0.1:$port" --data "$data" --admin-token "$token" --log-level error)
if [[ -z $desktop ]]; then
	"$bin" --headless "${args[@]}" >"$tmp/out.log" 2>&1 &
	pid=$!
else
	Xvfb -displayfd 3 -screen 0 1280x900x24 -nolisten tcp 3>"$tmp/display" >"$tmp/xvfb.log" 2>&1 &
	xvfb=$!
	for _ in $(seq 200); do [[ -s $tmp/display ]] && break; sleep 0.05; done
	[[ -s $tmp/display ]] || fail "Xvfb did not start: $(cat "$tmp/xvfb.log")"
	# The shell records its pid, then execs ccmesh in its place.
	# shellcheck disable=SC2016 # $$ and $@ are the inner shell's
	DISPLAY=:$(<"$tmp/display") WEBKIT_DISABLE_DMABUF_RENDERER=1 dbus-run-session -- \
		sh -c 'echo $$ >"$0"; exec "$@"' "$tmp/pid" "$bin" --minimized "${args[@]}" >"$tmp/out.log" 2>&1 &
	session=$!
	for _ in $(seq 200); do [[ -s $tmp/pid ]] && break; sleep 0.05; done
	[[ -s $tmp/pid ]] || fail "dbus-run-session did not start ccmesh"
	pid=$(<"$tmp/pid")
fi
for i in $(seq 301); do
	curl -fs -o /dev/null -H "Authorization: Bearer $token" "http://127.0.0.1:$port/api/info" && break
	kill -0 "$pid" 2>/dev/null || fail "ccmesh exited during start-up"
	((i < 301)) || fail "ccmesh did not answer on port $port within 30 s"
	sleep 0.1
done
sleep "$settle"

# snap: per process of ccmesh's tree "P pid ticks", per thread "T tid ns
# switches pid name" (name: main, go or the thread's own, no spaces).
snap() {
	local p t stat ns cs k v name
	local -a f
	for p in $(ps -e -o pid=,ppid= | awk -v root="$pid" '{par[$1] = $2}
		END {for (p in par) {q = p; while (q != root && q in par && q > 1) q = par[q]; if (q == root) print p}}'); do
		{ stat=$(<"/proc/$p/stat"); } 2>/dev/null || continue
		read -r -a f <<<"${stat##*) }" # f[0] is field 3; utime and stime are 14 and 15
		echo "P $p $((f[11] + f[12]))"
		for t in /proc/"$p"/task/*; do
			read -r ns _ 2>/dev/null <"$t/schedstat" || continue
			cs=0
			while read -r k v _; do
				case $k in voluntary_ctxt_switches: | nonvoluntary_ctxt_switches:) cs=$((cs + v)) ;; esac
			done 2>/dev/null <"$t/status" || true
			name=$(tr ' ' _ <"$t/comm" 2>/dev/null || echo gone)
			if [[ ${t##*/} == "$p" ]]; then
				name=main
			elif [[ $name == "$(tr ' ' _ <"/proc/$p/comm" 2>/dev/null)" ]]; then
				name=go
			fi
			echo "T ${t##*/} $ns $cs $p $name"
		done
	done
}
snap >"$tmp/s0"
t0=$EPOCHREALTIME
sleep "$secs"
snap >"$tmp/s1"
t1=$EPOCHREALTIME
kill -0 "$pid" 2>/dev/null || fail "ccmesh exited during the idle period"
# A process or thread missing from the first snapshot started during the
# period: all its time counts.
awk -v root="$pid" -v hz="$(getconf CLK_TCK)" -v t0="${t0/,/.}" -v t1="${t1/,/.}" '
	FNR == NR {v[$1 " " $2] = $3; w[$1 " " $2] = $4; if ($1 == "T") before++; next}
	$1 == "P" {d = $3 - v["P " $2]; ticks += d; procs++; if ($2 == root) mticks += d}
	$1 == "T" {d = $3 - v["T " $2]; c = $4 - w["T " $2]; ns += d; cs += c; threads++; if (("T " $2) in v) kept++
		if ($5 == root) {mns += d; mcs += c; byname[$6] += d}}
	function larger(a, b) {return a > b ? a : b}
	# cpu: schedstat when it saw every thread, else the larger figure.
	function cpu(sched, tick) {return before == kept ? sched : larger(sched, tick)}
	END {
		printf "{\"secs\":%.2f,\"cpu_ms\":%.2f,\"sched_ms\":%.2f,\"ticks_ms\":%.0f,\"exited\":%d,\"ctx_switches\":%d,", t1 - t0,
			cpu(ns / 1e6, ticks * 1000 / hz), ns / 1e6, ticks * 1000 / hz, before - kept, cs
		split_ = ""
		for (n in byname) if (byname[n] >= 5e5) split_ = split_ sprintf("%s%s %.1f ms", split_ == "" ? "" : ", ", n, byname[n] / 1e6)
		printf "\"main_cpu_ms\":%.2f,\"main_ctx_switches\":%d,\"main_threads\":\"%s\",\"procs\":%d,\"threads\":%d}\n",
			cpu(mns / 1e6, mticks * 1000 / hz), mcs, split_, procs, threads
	}' "$tmp/s0" "$tmp/s1"
