package flinkgotest_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/flinkgo/flinkgotest"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// upper is an operator type of "the user's binary": it upper-cases values.
func upperDefinition() runtime.Definition {
	return runtime.Definition{Type: "upper", Kind: api.KindOperator, Doc: "upper-cases values",
		Configure: func(c *runtime.ConfigContext) *runtime.Plan {
			c.Decode(&struct{}{})
			return &runtime.Plan{NewOperator: func() runtime.Operator { return upper{} }}
		}}
}

type upper struct{}

func (upper) Open(*runtime.Context) error { return nil }
func (upper) Close() error                { return nil }

func (upper) Process(b *runtime.Batch, out runtime.Output) error {
	for _, r := range b.Records {
		r.Value = bytes.ToUpper(r.Value)
		out.Emit(r)
	}
	return nil
}

// writeJob writes job.yaml and job_test.yaml into a temporary directory
// and returns the spec's path.
func writeJob(t *testing.T, spec, tests string) string {
	dir := t.TempDir()
	path := filepath.Join(dir, "job.yaml")
	require.NoError(t, os.WriteFile(path, []byte(spec), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "job_test.yaml"), []byte(tests), 0o644))
	return path
}

const upperSpec = `
name: shout
operators:
  - {uid: in, type: kafka, brokers: [localhost:9092], topic: words}
  - {uid: up, type: upper, from: [in]}
  - {uid: out, type: kafka, from: [up], brokers: [localhost:9092], topic: shouts}
`

// A spec using the binary's own operator type runs its tests under go
// test, each a subtest.
func TestRunSpecTestsWithACustomOperator(t *testing.T) {
	spec := writeJob(t, upperSpec, `
tests:
  - name: words are shouted
    inputs: {in: [{value: hello}, {value: world}]}
    expect: {out: {ordered: true, rows: [HELLO, WORLD]}}
  - name: nothing in, nothing out
    expect: {out: []}
`)
	flinkgotest.RunSpecTests(t, spec, flinkgotest.SpecTestOptions{Types: []runtime.Definition{upperDefinition()}})
}
