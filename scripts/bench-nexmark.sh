#!/usr/bin/env bash
# Nexmark on flinkgo: events/s and events per CPU-second of each query
# (configs/jobs/nexmark, exactly-once checkpoints on) beside Flink 1.13's
# published per-core figures, and q5 and q7 against hand-written Go
# programs over the same generator, in the same run. Options go to
# scripts/nexmarkbench (-events, -queries, -runs, -procs, -gogc; -rss for
# the long runs that sample the daemon's memory).
set -euo pipefail
cd "$(dirname "$0")/.."
make -s build
go run ./scripts/nexmarkbench -bin bin/flinkgo "$@"
