package cli

import "github.com/flinkgo/flinkgo/pkg/runtime"

// faultsFromEnv returns the fault-injection hook configured for tests by
// environment (none in production).
func faultsFromEnv() (runtime.FaultHook, error) { return nil, nil }
