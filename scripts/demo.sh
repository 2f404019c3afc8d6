#!/usr/bin/env bash
# make demo — the savepoint experiment of the Flink blog post, on one machine,
# with nothing installed but Go:
#   a producer writes {"idx": N} to Kafka (the embedded development broker);
#   a job copies the records into time-bucketed files, exactly once;
#   (a) cancel and restart WITHOUT a savepoint from latest offsets: a gap;
#   (b) savepoint, cancel, restore with -s: no gap, no duplicate.
# Everything runs in a temporary directory that is removed at the end. The
# script exits 0 only if (b) shows no gap and no duplicate.
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=$(mktemp -d -t flinkgo-demo.XXXXXX)
. scripts/demo-lib.sh
start_broker_and_daemon flink-test:1

say "producing {\"idx\": N} at 2000 records/s"
"$BIN" dev produce --brokers "$BROKER" --topic flink-test --rate 2000 >"$WORK/producer.out" 2>"$WORK/producer.log" &
PIDS+=($!)

# job SPEC_NAME OUT_DIR STARTING_OFFSETS: the example job, pointed at the
# demo's broker and output directory.
job() {
  sed -e "s|localhost:9092|$BROKER|" -e "s|/tmp/flinkgo-out|$2|" -e "s|startingOffsets: earliest|startingOffsets: $3|" \
    configs/jobs/kafka-to-files.yaml >"$WORK/$1.yaml"
  echo "$WORK/$1.yaml"
}
# last_idx DIR: the largest idx in the finished files (0 if none)
# (The verify command exits non-zero when it finds gaps; only its figures
# matter here.)
figure() { { "$BIN" dev verify --path "$1" -o json 2>/dev/null || true; } | sed -n "s/^  \"$2\": \([0-9]*\).*/\1/p"; }
last_idx() { figure "$1" last; }
wait_committed() {  # wait until DIR has committed at least N records
  for _ in $(seq 150); do
    local n; n=$(figure "$1" records)
    [ "${n:-0}" -ge "$2" ] && return 0; sleep 0.2
  done
  fail "nothing committed in $1"
}

say "(a) without a savepoint: run, cancel, wait, run again from latest offsets"
A=$WORK/out-a
ID=$("$BIN" run "$(job a1 "$A" earliest)") || fail "run"
echo "job $ID"
wait_committed "$A" 4000
"$BIN" cancel "$ID" 2>/dev/null
BEFORE=$(last_idx "$A")
echo "last committed idx before cancel: $BEFORE"
sleep 1 # the records produced meanwhile (2000/s) are the gap a restart from latest offsets leaves
# The same directory on purpose (to show the gap): a new job needs
# --allow-non-empty-output to write into output that is already there.
ID=$("$BIN" run --allow-non-empty-output "$(job a2 "$A" latest)") || fail "run"
wait_committed "$A" $((BEFORE + 2000))
"$BIN" cancel "$ID" 2>/dev/null
"$BIN" dev verify --path "$A" >"$WORK/a.txt" 2>/dev/null || true
echo "dev verify on (a):"; sed 's/^/    /' "$WORK/a.txt"
grep -q "missing" "$WORK/a.txt" || grep -q "gap" "$WORK/a.txt" || fail "(a) should show a gap"

say "(b) with a savepoint: run, savepoint, cancel, wait, run -s"
B=$WORK/out-b
ID=$("$BIN" run "$(job b "$B" earliest)") || fail "run"
echo "job $ID"
wait_committed "$B" 4000
SP=$("$BIN" savepoint "$ID" 2>/dev/null) || fail "savepoint"
echo "savepoint: $SP"
"$BIN" cancel "$ID" 2>"$WORK/cancel.txt"
sed 's/^/    /' "$WORK/cancel.txt"
BEFORE=$(last_idx "$B")
NEXT=$("$BIN" savepoint inspect "$SP" -o json | sed -n 's/.*"flink-test\/0": \([0-9]*\).*/\1/p' | sed -n 1p)
echo "last committed idx before cancel: $BEFORE; the savepoint resumes at offset ${NEXT:-?} (idx $(( ${NEXT:-0} + 1 )))"
sleep 1 # as long as in (a): the restored job picks up the records produced meanwhile
ID=$("$BIN" run -s "$SP" "$(job b "$B" earliest)") || fail "run -s"
echo "restored job $ID from $SP"
wait_committed "$B" $((BEFORE + 4000))
STOP=$("$BIN" stop "$ID" 2>/dev/null) || fail "stop"
echo "stopped with savepoint $STOP"

say "checking (b): every idx exactly once"
if "$BIN" dev verify --path "$B" >"$WORK/b.txt" 2>/dev/null; then OK=1; else OK=0; fi
sed 's/^/    /' "$WORK/b.txt"

say "summary"
echo "(a) restart without savepoint: $(head -1 "$WORK/a.txt")"
echo "(b) savepoint, cancel, run -s:  $(head -1 "$WORK/b.txt")"
[ "$OK" = 1 ] || fail "(b) has a gap or a duplicate"
echo "no gap and no duplicate with -s."
