package cli

import (
	"fmt"
	"os"

	"github.com/flinkgo/flinkgo/internal/fault"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// faultsFromEnv returns the fault injector described by $FLINKGO_FAULTS, for
// the fault-injection tests (nil when unset: production). Each firing is
// written to stderr before it takes effect.
func faultsFromEnv() (runtime.FaultHook, error) {
	spec := os.Getenv(fault.EnvVar)
	if spec == "" {
		return nil, nil
	}
	rules, err := fault.Parse(spec)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", fault.EnvVar, err)
	}
	fmt.Fprintf(os.Stderr, "flinkgo: FAULT INJECTION ACTIVE (%s=%q): for testing only\n", fault.EnvVar, spec)
	return fault.New(func(point string, a fault.Action, attrs []any) {
		fmt.Fprintf(os.Stderr, "flinkgo: injected fault: %s %s %v\n", point, a, attrs)
	}, rules...), nil
}
