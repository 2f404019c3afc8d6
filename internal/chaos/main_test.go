package chaos

import (
	"slices"
	"testing"

	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/connectors/all"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testRegistry holds the built-in operator types and runtimetest's.
var testRegistry = runtime.MustRegistry(slices.Concat(runtimetest.Definitions(), all.Definitions())...)
