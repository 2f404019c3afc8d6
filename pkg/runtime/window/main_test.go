package window_test

import (
	"slices"
	"testing"

	"go.uber.org/goleak"

	"github.com/flinkgo/flinkgo/pkg/connectors/all"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testTypes are the operator types the tests' specs use.
var testTypes = slices.Concat(all.Definitions(), []runtime.Definition{testSourceDef()})
