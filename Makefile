# flinkgo — common tasks. Only Go is needed.
GO      ?= go
BIN     := bin/flinkgo
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X github.com/flinkgo/flinkgo/internal/cli.Version=$(VERSION)

.PHONY: build check test test-short bench lint demo demo-kafka scorecard chaos fuzz clean

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/flinkgo

# The edit loop: every package's unit and connector tests under -short
# (crash sweeps and soak tests shorten or skip themselves), without the
# race detector (it costs 5-10x; make test runs it), the end-to-end tests
# of the real binary (./e2e) and the fault sweeps of ./internal/chaos.
# Under 2 minutes on 2 cores. Most of these packages wait on brokers,
# servers and timers rather than compute, so CHECK_P (4) of them run at
# once instead of go test's default of one per core, and within a package
# CHECK_PARALLEL (4) tests marked t.Parallel (kafka's outage and restart
# tests, which wait on timeouts with brokers of their own).
CHECK_P ?= 4
CHECK_PARALLEL ?= 4
CHECK_PKGS = $(shell $(GO) list ./... | grep -v -e '/e2e$$' -e '/internal/chaos$$')
check:
	$(GO) test -short -count=1 -p $(CHECK_P) -parallel $(CHECK_PARALLEL) -timeout 5m $(CHECK_PKGS)

# The whole suite: unit, connector, end-to-end (real binary) and fault
# tests, with the race detector; ≤ 10 minutes on 2 cores. The end-to-end
# tests mostly wait on daemons, so TEST_PARALLEL of them run at once
# (t.Parallel). The fault tests' figures are printed at the end. The
# fuzz targets are `make fuzz`, which .ci/run runs after this.
TEST_PARALLEL ?= 3
# The slowest packages first (a full run of 944 s under load: e2e 383 s,
# chaos 271, nexmark 239, window 135, engine 123), so that none of them
# starts last and runs alone on one core; ./... adds the rest once each.
TEST_PKGS = ./e2e ./internal/chaos ./pkg/connectors/nexmark ./pkg/runtime/window ./internal/engine \
	./pkg/connectors/file ./pkg/runtime/join ./pkg/connectors/kafka ./...
test: build
	@dir=$$(mktemp -d); start=$$(date +%s); \
	FLINKGO_SCORECARD_DIR=$$dir $(GO) test -race -count=1 -parallel $(TEST_PARALLEL) -timeout 14m $(TEST_PKGS) || { rm -rf $$dir; exit 1; }; \
	$(GO) run ./scripts/scorecard -dir $$dir -by "make test" -wall $$(( $$(date +%s) - start ))s || true; rm -rf $$dir

# Run the suite and write the fault tests' figures into the README.
scorecard: build
	@dir=$$(mktemp -d); start=$$(date +%s); \
	FLINKGO_SCORECARD_DIR=$$dir $(GO) test -race -count=1 -parallel $(TEST_PARALLEL) -timeout 14m $(TEST_PKGS) || { rm -rf $$dir; exit 1; }; \
	$(GO) run ./scripts/scorecard -dir $$dir -readme README.md -wall $$(( $$(date +%s) - start ))s; rm -rf $$dir

# Longer fault sweeps and kill loops.
chaos: build
	FLINKGO_CHAOS=long FLINKGO_E2E_RACE=1 $(GO) test -race -count=1 -timeout 60m ./internal/chaos/ ./e2e/

# Fuzz the spec parser, the snapshot decoders, the connectors' state
# decoders, the per-record JSON member scanner (against encoding/json, the
# native path against the VM, a join side's projection) and the JSON
# string writer for a bounded number of executions each (.ci/run: 40,000
# each, after make test). A count, not a duration: with a duration Go
# 1.26's fuzz coordinator can report its own stop deadline as a failure
# ("context deadline exceeded", golang/go#75804, fixed in Go 1.27).
FUZZTIME ?= 500000x
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzParseJob -fuzztime $(FUZZTIME) ./pkg/api/
	$(GO) test -run '^$$' -fuzz FuzzDecodeMetadata -fuzztime $(FUZZTIME) ./internal/checkpoint/
	$(GO) test -run '^$$' -fuzz FuzzDecode -fuzztime $(FUZZTIME) ./pkg/state/
	for p in datagen file kafka nats nexmark; do $(GO) test -run '^$$' -fuzz FuzzStateDecoders -fuzztime $(FUZZTIME) ./pkg/connectors/$$p/ || exit 1; done
	for p in window transform; do $(GO) test -run '^$$' -fuzz FuzzStateDecoders -fuzztime $(FUZZTIME) ./pkg/runtime/$$p/ || exit 1; done
	$(GO) test -run '^$$' -fuzz FuzzJSONFields -fuzztime $(FUZZTIME) ./pkg/runtime/expr/
	$(GO) test -run '^$$' -fuzz FuzzNativeAgreesWithTheVM -fuzztime $(FUZZTIME) ./pkg/runtime/expr/
	$(GO) test -run '^$$' -fuzz FuzzProject -fuzztime $(FUZZTIME) ./pkg/runtime/expr/
	$(GO) test -run '^$$' -fuzz FuzzCompile -fuzztime $(FUZZTIME) ./internal/sql/planner/
	$(GO) test -run '^$$' -fuzz FuzzFastScan -fuzztime $(FUZZTIME) ./pkg/runtime/expr/
	$(GO) test -run '^$$' -fuzz FuzzShapesChangeNothing -fuzztime $(FUZZTIME) ./pkg/runtime/expr/
	$(GO) test -run '^$$' -fuzz FuzzAppend -fuzztime $(FUZZTIME) ./pkg/runtime/jsonstring/
	$(GO) test -run '^$$' -fuzz FuzzNumericOptions -fuzztime $(FUZZTIME) ./pkg/connectors/all/

test-short:
	$(GO) test -short -count=1 ./...

# Every figure the issues ask for, each against a baseline of the same run.
bench: build
	# ./internal/engine includes BenchmarkPebbleVsHeap (~25 s: heap vs pebble state, peak RSS)
	$(GO) test -run '^$$' -bench . -benchtime 1x ./internal/engine/
	$(GO) test -run '^$$' -bench IncrementalVsFull -benchtime 1x ./internal/pebblestate/
	$(GO) test -run '^$$' -bench DashboardCost -benchtime 1x ./internal/daemon/
	$(GO) test -run '^$$' -bench . -benchtime 1x ./pkg/runtime/window/
	$(GO) test -run '^$$' -bench EventsVsJSON -benchtime 1x ./pkg/connectors/datagen/
	$(GO) test -run '^$$' -bench 'FileVsDiscard|CommitCost|S3SinkVsLocalDisk|ParquetVsJSON' -benchtime 1x ./pkg/connectors/file/
	$(GO) test -run '^$$' -bench SourceVsPlainLoop -benchtime 1x ./pkg/connectors/filesource/
	$(GO) test -run '^$$' -bench QueueVsPlainClient -benchtime 1x ./pkg/connectors/nats/
	$(GO) test -run '^$$' -bench CommitToSinkLatency -benchtime 1x ./pkg/connectors/postgrescdc/
	$(GO) test -run '^$$' -bench SourceVsReaderLoop -benchtime 1x ./pkg/connectors/kafka/
	$(GO) test -run '^$$' -bench SinkVsCopy -benchtime 1x ./pkg/connectors/postgres/
	$(GO) test -run '^$$' -bench ReaderThroughput -benchtime 1x ./internal/dev/kafkabroker/
	$(GO) test -run '^$$' -bench RunUnlimited -benchtime 1x ./internal/dev/produce/
	$(GO) test -run '^$$' -bench . -benchtime 1x ./internal/storage/
	./scripts/bench-kafka.sh
	$(GO) run ./scripts/kafkatxnbench -bin $(BIN)
	$(GO) run ./scripts/habench -bin $(BIN)
	./scripts/bench-nexmark.sh
	$(GO) run ./scripts/endedjobs -bin $(BIN)

lint:
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# The savepoint experiment: Kafka → files, then Kafka → Kafka (transactions).
demo: build
	./scripts/demo.sh
	./scripts/demo-kafka.sh

demo-kafka: build
	./scripts/demo-kafka.sh

clean:
	rm -rf bin
