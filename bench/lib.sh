# bench/lib.sh: helpers bench/run.sh and bench/extra.sh share (sourced).
# shellcheck shell=bash

log() { printf '%s bench: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() {
	log "error: $*"
	exit 1
}

# wait_for CHECK...: retry CHECK for up to 10 s.
wait_for() {
	for _ in $(seq 200); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.05
	done
	return 1
}

free_port() {
	local p
	for p in $(seq 38100 38999); do
		ss -Htln "sport = :$p" | grep -q . || {
			echo "$p"
			return
		}
	done
	die "no free port in 38100-38999"
}

# oneline: stdin as one line fit for a JSON string (no controls, quotes or
# backslashes).
oneline() { tr -c '[:print:]' ' ' | tr '"\134' "'/"; }
