package join_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/flinkgo/flinkgo/pkg/connectors/all"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testTypes are the operator types the tests' specs use.
var testTypes = all.Definitions()
