package engine_test

import (
	"errors"
	"flag"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/internal/specgolden"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// rewrite regenerates the want lines of testdata/bad/*.yaml:
//
//	go test ./internal/engine -run TestCompileBad -rewrite
var rewrite = flag.Bool("rewrite", false, "rewrite the expectations in testdata from the current output")

// TestCompileBad replays testdata/bad/*.yaml with the built-in operator
// types: a wrong graph and wrong operator options are reported in one
// pass, and no problem that only follows from another is.
func TestCompileBad(t *testing.T) {
	specgolden.Replay(t, "testdata/bad/*.yaml", 9, *rewrite, func(t *testing.T, file string, src []byte) []string {
		_, err := engine.Compile(testRegistry, file, src, engine.Defaults{})
		var se *api.SpecError
		require.True(t, errors.As(err, &se), "want a *api.SpecError, got %v", err)
		got := make([]string, len(se.Errors))
		for i, fe := range se.Errors {
			fe.File = ""
			got[i] = fe.Error()
		}
		return got
	})
}
