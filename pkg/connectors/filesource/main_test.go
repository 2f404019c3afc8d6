package filesource

import (
	"slices"
	"testing"

	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/connectors/discard"
	"github.com/flinkgo/flinkgo/pkg/connectors/file"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/runtime/transform"
	"github.com/flinkgo/flinkgo/pkg/runtime/window"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testTypes are the operator types the tests' specs use: this source, the
// file sink and windows.
var testTypes = slices.Concat(Definitions(), file.Definitions(), discard.Definitions(), transform.Definitions(), window.Definitions())

// testRegistry holds testTypes and the test operators of runtimetest.
var testRegistry = runtime.MustRegistry(slices.Concat(runtimetest.Definitions(), testTypes)...)
