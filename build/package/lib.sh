# shellcheck shell=bash
# Helpers shared by build/package/test-package.sh and test-release.sh
# (sourced, not run). Each check that holds calls pass; the first that does
# not calls fail, which prints the count and exits 1.

passed=0
test_name=${test_name:-test}
serve_pid=
serve_log=

pass() {
  passed=$((passed + 1))
  echo "ok: $*"
}

fail() {
  echo "FAIL: $*" >&2
  echo "$test_name: $passed passed, 1 failed"
  exit 1
}

# done_ok prints the closing line of a run where every check held.
done_ok() {
  echo "$test_name: $passed passed, 0 failed"
}

need() {
  local t
  for t in "$@"; do
    command -v "$t" >/dev/null || fail "$t not found: run build/deps.sh (as root it installs what make test needs)"
  done
}

# free_port prints a loopback TCP port that nothing listens on now.
free_port() {
  local port _
  for _ in $(seq 50); do
    port=$((20000 + RANDOM % 40000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return 0
    fi
  done
  return 1
}

# stop_serving ends the ccmesh that serve_check started, if it still runs.
stop_serving() {
  if [ -n "$serve_pid" ] && kill -0 "$serve_pid" 2>/dev/null; then
    kill -KILL "$serve_pid" 2>/dev/null || true
    wait "$serve_pid" 2>/dev/null || true
  fi
  serve_pid=
}

# serve_check BINARY VERSION WORKDIR: runs BINARY headless on a free
# loopback port with a fresh data dir under WORKDIR, checks that the admin
# API reports VERSION, that the proxy answers /v1/models and that the UI is
# built in, then stops it with SIGTERM and wants a clean exit.
serve_check() {
  local bin=$1 version=$2 work=$3 port token data base code body i
  port=$(free_port) || fail "found no free loopback port in 50 tries"
  token=test-$RANDOM-$RANDOM-$RANDOM-token
  data=$(mktemp -d "$work/data.XXXXXX")
  serve_log=$work/serve.log
  base=http://127.0.0.1:$port
  env -u DISPLAY -u WAYLAND_DISPLAY "$bin" --headless --data "$data" --listen "127.0.0.1:$port" \
    --admin-token "$token" >"$serve_log" 2>&1 &
  serve_pid=$!
  # Up to 20 s for the port to answer; a ccmesh that exits fails at once.
  code=000
  for i in $(seq 200); do
    kill -0 "$serve_pid" 2>/dev/null || fail "$bin --headless exited before it answered (try $i):
$(cat "$serve_log")"
    code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$base/v1/models" || true)
    [ "$code" = 000 ] || break
    sleep 0.1
  done
  [ "$code" != 000 ] || fail "$bin did not answer on $base within 20 s:
$(cat "$serve_log")"
  pass "$bin --headless answers GET /v1/models on $base (HTTP $code)"

  body=$(curl -s --max-time 5 -H "Authorization: Bearer $token" "$base/api/info") ||
    fail "GET /api/info failed"
  case $body in
    *"\"version\":\"$version\""*'"headless":true'*) pass "GET /api/info: version $version, headless" ;;
    *) fail "GET /api/info: want version $version and headless true, got: $body" ;;
  esac
  code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$base/api/info")
  [ "$code" = 401 ] || fail "GET /api/info without the admin token: HTTP $code, want 401"
  pass "GET /api/info without the admin token is refused (401)"
  # Without the UI built in, /ui/ is a 503 that says to run make ui.
  code=$(curl -s -o "$work/ui.html" -w '%{http_code} %{content_type}' --max-time 5 "$base/ui/")
  case $code in
    "200 text/html"*) pass "GET /ui/ serves the built UI ($code)" ;;
    *) fail "GET /ui/: want the built UI (200 text/html), got $code: $(head -c 300 "$work/ui.html")" ;;
  esac

  kill -TERM "$serve_pid"
  local rc=0
  wait "$serve_pid" || rc=$?
  serve_pid=
  [ "$rc" = 0 ] || fail "ccmesh exited $rc after SIGTERM, want 0:
$(cat "$serve_log")"
  pass "SIGTERM stops it with exit 0"
}
