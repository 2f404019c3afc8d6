package datagen

import (
	"slices"
	"testing"

	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/connectors/discard"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testTypes are the operator types the tests' specs use.
var testTypes = slices.Concat(Definitions(), discard.Definitions())

// testRegistry holds testTypes and the test operators of runtimetest.
var testRegistry = runtime.MustRegistry(slices.Concat(runtimetest.Definitions(), testTypes)...)
