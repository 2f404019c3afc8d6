package nexmark_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/flinkgo/flinkgo/pkg/connectors/all"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var testTypes = all.Definitions()
