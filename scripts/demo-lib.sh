# Sourced by the demo scripts: a temporary FLINKGO_HOME removed at exit, the
# background processes killed at exit, messages, and the embedded broker and
# daemon. The caller sets WORK (mktemp -d) first.
BIN=${BIN:-$PWD/bin/flinkgo}
export FLINKGO_HOME=$WORK/home
# The demo checks its jobs itself (dev verify): run need not watch each
# start for a failure (--wait-running), which would add 2 s a job.
export FLINKGO_WAIT_RUNNING=0
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
fail() { echo "demo failed: $*" >&2; echo "--- daemon log (tail):" >&2; tail -20 "$WORK/daemon.log" >&2 || true; exit 1; }

# start_broker_and_daemon TOPIC...: the development broker on a free port
# (the demo must not clash with a real Kafka) with the topics, and the
# daemon; sets BROKER to the broker's address.
start_broker_and_daemon() {
  local args=()
  for t in "$@"; do args+=(--topic "$t"); done
  say "starting the development Kafka broker (topics $*)"
  "$BIN" dev kafka --listen 127.0.0.1:0 "${args[@]}" >"$WORK/broker.out" 2>"$WORK/broker.log" &
  PIDS+=($!)
  say "starting the flinkgo daemon (FLINKGO_HOME=$FLINKGO_HOME)"
  "$BIN" daemon --rest-address "" --savepoints-dir "$WORK/savepoints" >"$WORK/daemon.out" 2>"$WORK/daemon.log" &
  PIDS+=($!)
  for _ in $(seq 100); do [ -S "$FLINKGO_HOME/flinkgo.sock" ] && [ -s "$WORK/broker.out" ] && break; sleep 0.1; done
  [ -S "$FLINKGO_HOME/flinkgo.sock" ] || fail "the daemon did not start"
  BROKER=$(head -1 "$WORK/broker.out")
  [ -n "$BROKER" ] || fail "the broker did not start: $(cat "$WORK/broker.log")"
  echo "broker at $BROKER"
}
