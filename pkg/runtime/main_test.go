package runtime_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test leaves no goroutine behind: canceling or finishing a job stops
// all of its subtasks and background writes.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
