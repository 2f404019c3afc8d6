#!/usr/bin/env bash
# make demo-kafka — the savepoint experiment of the Flink blog post with a
# Kafka sink, on one machine, with nothing installed but Go:
#   a producer writes {"idx": N} to topic flink-test (the embedded broker);
#   a job copies them into topic flink-out inside Kafka transactions
#   (deliveryGuarantee: exactly-once), committed on checkpoints;
#   savepoint, cancel, restore with -s, stop;
#   a read_committed reader (flinkgo dev verify --kafka) finds every idx
#   exactly once, although the first run wrote records after the savepoint
#   (its transactions were never committed, so they are never read).
# Everything runs in a temporary directory removed at the end. The script
# exits 0 only if the output holds every idx exactly once.
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=$(mktemp -d -t flinkgo-demo-kafka.XXXXXX)
. scripts/demo-lib.sh
start_broker_and_daemon flink-test:2 flink-out:2

say "producing {\"idx\": N} at 2000 records/s"
"$BIN" dev produce --brokers "$BROKER" --topic flink-test --rate 2000 >"$WORK/producer.out" 2>"$WORK/producer.log" &
PRODUCER=$!
PIDS+=($PRODUCER)

# Checkpoints every 5 minutes: in this run only the savepoint and the stop
# pre-commit. A periodic checkpoint completing between the savepoint and
# the cancel would commit records the restored job writes again: Kafka
# transactions cannot be taken back (the file sink's part files can), so
# savepoint-then-cancel is exact only without one; `flinkgo stop` is the
# atomic pause (savepoint and commit in one step).
SPEC=$WORK/kafka-to-kafka.yaml
sed -e "s|localhost:9092|$BROKER|g" -e "s|interval: 2s|interval: 5m|" -e "s|  mode: exactly-once|  timeout: 1m\n  mode: exactly-once|" \
  configs/jobs/kafka-to-kafka.yaml >"$SPEC"
# figure NAME: a number from `dev verify --kafka flink-out -o json`, the
# committed records (it exits non-zero on gaps; only its figures matter).
figure() { { "$BIN" dev verify --kafka flink-out --brokers "$BROKER" -o json 2>/dev/null || true; } | sed -n "s/^  \"$1\": \([0-9]*\).*/\1/p"; }
written() { "$BIN" dev consume --topic flink-out --brokers "$BROKER" --isolation read_uncommitted | wc -l; }
wait_written() {  # wait until flink-out holds at least N records, committed or not
  for _ in $(seq 150); do
    [ "$(written)" -ge "$1" ] && return 0; sleep 0.2
  done
  fail "fewer than $1 records written to flink-out"
}

say "run, savepoint, cancel, wait, run -s, stop"
ID=$("$BIN" run "$SPEC") || fail "run"
echo "job $ID"
wait_written 4000
SP=$("$BIN" savepoint "$ID" 2>/dev/null) || fail "savepoint"
echo "savepoint: $SP (its transactions are pre-committed: flushed, not yet committed)"
sleep 1 # the job writes on after the savepoint, into a transaction the cancel aborts
"$BIN" cancel "$ID" 2>"$WORK/cancel.txt"
sed 's/^/    /' "$WORK/cancel.txt"
W=$(written)
echo "after the cancel: $W records written to flink-out, $(figure records) committed (read_committed sees none)"
sleep 1 # records produced meanwhile: the restored job reads them from the savepoint's offsets
ID=$("$BIN" run -s "$SP" "$SPEC") || fail "run -s"
echo "restored job $ID from $SP"
for _ in $(seq 50); do [ "$(figure records)" -gt 0 ] && break; sleep 0.1; done
echo "the restored job committed the savepoint's transaction: records up to idx $(figure last) are visible"
wait_written $(( W + 4000 ))
kill "$PRODUCER"; wait "$PRODUCER" 2>/dev/null || true
STOP=$("$BIN" stop "$ID" 2>/dev/null) || fail "stop"
echo "stopped with savepoint $STOP (savepoint and commit in one step)"

say "checking flink-out with a read_committed reader: every idx exactly once"
if "$BIN" dev verify --kafka flink-out --brokers "$BROKER" >"$WORK/verify.txt" 2>/dev/null; then OK=1; else OK=0; fi
sed 's/^/    /' "$WORK/verify.txt"
echo "$(written) records in flink-out in all; the ones written after the savepoint by the canceled job were aborted"
[ "$OK" = 1 ] || fail "the committed output has a gap or a duplicate"
[ "$(figure first)" = 1 ] || fail "the committed output does not start at idx 1"
echo "no gap and no duplicate in the committed output."
