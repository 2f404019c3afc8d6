package main

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/flinkgo/flinkgo/pkg/flinkgo/flinkgotest"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The tests of job.yaml (job_test.yaml), with this binary's operator type:
// what `flinkgo-custom test examples/custom-operator/job.yaml` runs.
func TestJobSpec(t *testing.T) {
	flinkgotest.RunSpecTests(t, "job.yaml", flinkgotest.SpecTestOptions{Types: []runtime.Definition{averageDefinition()}})
}
