package api

import (
	"flag"
	"testing"

	"go.uber.org/goleak"
)

// rewrite regenerates the expectations kept in testdata (the "# want:"
// lines of testdata/bad/*.yaml) from what the code does now:
//
//	go test ./pkg/api -run TestParseJobBad -rewrite
//
// Review the diff before committing it: it is the behavior change.
var rewrite = flag.Bool("rewrite", false, "rewrite the expectations in testdata from the current output")

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
