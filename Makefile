# flinkgo — common tasks. Only Go is needed.
GO      ?= go
BIN     := bin/flinkgo
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X github.com/flinkgo/flinkgo/internal/cli.Version=$(VERSION)

.PHONY: build test test-short bench lint demo demo-kafka scorecard chaos fuzz clean

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/flinkgo

# The whole suite: unit, connector, end-to-end (real binary) and fault tests,
# with the race detector, then the parsers' fuzz targets for 40,000
# executions each. The fault tests' figures are printed at the end.
test: build
	@dir=$$(mktemp -d); start=$$(date +%s); \
	FLINKGO_SCORECARD_DIR=$$dir $(GO) test -race -count=1 -timeout 14m ./... || { rm -rf $$dir; exit 1; }; \
	$(MAKE) -s fuzz FUZZTIME=40000x || { rm -rf $$dir; exit 1; }; \
	$(GO) run ./scripts/scorecard -dir $$dir -by "make test" -wall $$(( $$(date +%s) - start ))s || true; rm -rf $$dir

# Run the suite and write the fault tests' figures into the README.
scorecard: build
	@dir=$$(mktemp -d); start=$$(date +%s); \
	FLINKGO_SCORECARD_DIR=$$dir $(GO) test -race -count=1 -timeout 14m ./... || { rm -rf $$dir; exit 1; }; \
	$(GO) run ./scripts/scorecard -dir $$dir -readme README.md -wall $$(( $$(date +%s) - start ))s; rm -rf $$dir

# Longer fault sweeps and kill loops.
chaos: build
	FLINKGO_CHAOS=long $(GO) test -race -count=1 -timeout 60m ./internal/chaos/ ./e2e/

# Fuzz the spec parser, the snapshot decoders, the connectors' state
# decoders, the per-record JSON member scanner (against encoding/json, the
# native path against the VM, a join side's projection) and the JSON
# string writer for a bounded number of executions each. A count, not a
# duration: with a duration Go 1.26's fuzz coordinator can report its own
# stop deadline as a failure
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
	$(GO) test -run '^$$' -fuzz FuzzAppend -fuzztime $(FUZZTIME) ./pkg/runtime/jsonstring/
	$(GO) test -run '^$$' -fuzz FuzzNumericOptions -fuzztime $(FUZZTIME) ./pkg/connectors/all/

test-short:
	$(GO) test -short -count=1 ./...

# Every figure the issues ask for, each against a baseline of the same run.
bench: build
	$(GO) test -run '^$$' -bench . -benchtime 1x ./internal/engine/
	$(GO) test -run '^$$' -bench DashboardCost -benchtime 1x ./internal/daemon/
	$(GO) test -run '^$$' -bench . -benchtime 1x ./pkg/runtime/window/
	$(GO) test -run '^$$' -bench EventsVsJSON -benchtime 1x ./pkg/connectors/datagen/
	$(GO) test -count=1 -v -run 'TestThroughputReport|TestCommitCostReport' ./pkg/connectors/file/ | grep -v '^=== RUN'
	$(GO) test -count=1 -v -run 'TestThroughputQueueVsPlainClient' ./pkg/connectors/nats/ | grep -v '^=== RUN'
	$(GO) test -run '^$$' -bench . -benchtime 1x ./internal/storage/
	$(GO) test -run '^$$' -bench S3SinkVsLocalDisk -benchtime 1x ./pkg/connectors/file/
	./scripts/bench-kafka.sh
	$(GO) run ./scripts/kafkatxnbench -bin $(BIN)
	$(GO) run ./scripts/habench -bin $(BIN)
	./scripts/bench-nexmark.sh

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
