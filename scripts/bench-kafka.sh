#!/usr/bin/env bash
# Kafka → file throughput of flinkgo against a plain kafka-go Reader loop,
# same run, same embedded broker. Prints both rates and the ratio.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s build
go run ./scripts/kafkabench -bin bin/flinkgo "$@"
