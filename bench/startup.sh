#!/usr/bin/env bash
# bench/startup.sh BIN DATA_DIR: milliseconds from exec to the first answered
# HTTP request (GET /v1/models, polled with curl as fast as it goes), for a
# start-up budget; run it a few times. See bench/NOTES.md.
bin=$1; data=$2; port=$((20000 + RANDOM % 20000))
t0=$(date +%s%N)
"$bin" --headless --listen 127.0.0.1:$port --data "$data" --admin-token startup-admin-token-0123 --log-level error >/dev/null 2>&1 & pid=$!
until curl -s -o /dev/null "http://127.0.0.1:$port/v1/models"; do :; done
t1=$(date +%s%N)
kill $pid; wait $pid 2>/dev/null
echo $(( (t1-t0)/1000000 ))
