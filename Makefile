# flinkgo — common tasks. Only Go is needed.
GO      ?= go
BIN     := bin/flinkgo
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X github.com/flinkgo/flinkgo/internal/cli.Version=$(VERSION)

.PHONY: build test test-short race bench lint demo clean

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/flinkgo

# The whole suite: unit, connector, end-to-end (real binary) and fault tests,
# with the race detector.
test: build
	$(GO) test -race -count=1 -timeout 14m ./...

test-short:
	$(GO) test -short -count=1 ./...

bench: build
	$(GO) test -run '^$$' -bench . -benchtime 2s ./pkg/runtime/...

lint:
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

demo: build
	./scripts/demo.sh

clean:
	rm -rf bin
