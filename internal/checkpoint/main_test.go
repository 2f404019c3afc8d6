package checkpoint

import (
	"flag"
	"testing"

	"go.uber.org/goleak"
)

// rewrite regenerates the expected output of the script tests in
// testdata/coordinator from what the coordinator decides now:
//
//	go test ./internal/checkpoint -run TestCoordinatorScripts -rewrite
//
// Review the diff: it is the behavior change.
var rewrite = flag.Bool("rewrite", false, "rewrite the expected output in testdata from the current output")

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
