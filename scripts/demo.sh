#!/usr/bin/env bash
# make demo: start a daemon in a temporary home, run the datagen → print job,
# show its output for a few seconds, cancel it and stop the daemon.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-./bin/flinkgo}
export FLINKGO_HOME=$(mktemp -d -t flinkgo-demo.XXXXXX)
cleanup() {
  [ -n "${DAEMON_PID:-}" ] && kill "$DAEMON_PID" 2>/dev/null && wait "$DAEMON_PID" 2>/dev/null || true
  rm -rf "$FLINKGO_HOME"
}
trap cleanup EXIT

echo "== starting the daemon (FLINKGO_HOME=$FLINKGO_HOME)"
"$BIN" daemon --rest-address "" >"$FLINKGO_HOME/daemon.out" 2>"$FLINKGO_HOME/daemon.log" &
DAEMON_PID=$!
for _ in $(seq 50); do [ -S "$FLINKGO_HOME/flinkgo.sock" ] && break; sleep 0.1; done

echo "== flinkgo run configs/jobs/datagen-print.yaml"
JOB=$("$BIN" run configs/jobs/datagen-print.yaml)
echo "job id: $JOB"
sleep 4
echo "== its output (print sink):"
cat "$FLINKGO_HOME/jobs/$JOB/job.out"
echo "== flinkgo info $JOB"
"$BIN" info "$JOB"
echo "== flinkgo cancel $JOB"
"$BIN" cancel "$JOB"
echo "== done"
