package engine_test

import (
	"slices"
	"testing"

	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/connectors/all"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"go.uber.org/goleak"
)

// Every test leaves no goroutine behind: canceling or finishing a job stops
// all of its subtasks and background writes.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testTypes are the operator types the tests' specs use.
var testTypes = all.Definitions()

// testRegistry holds testTypes and the test operators of runtimetest.
var testRegistry = runtime.MustRegistry(slices.Concat(runtimetest.Definitions(), testTypes)...)
