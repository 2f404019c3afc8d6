package flinkgo_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/flinkgo"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// A binary with an operator type of its own runs `test` on the specs that
// use it; a plain one refuses them; a wrong expectation exits 1 with the
// difference.
func TestTestCommandKnowsTheBinarysTypes(t *testing.T) {
	reverse := runtime.Definition{Type: "reverse", Kind: api.KindOperator, Doc: "reverses values",
		Configure: func(c *runtime.ConfigContext) *runtime.Plan {
			c.Decode(&struct{}{})
			return &runtime.Plan{NewOperator: func() runtime.Operator { return reverseOp{} }}
		}}
	dir := t.TempDir()
	spec := filepath.Join(dir, "job.yaml")
	require.NoError(t, os.WriteFile(spec, []byte(`
name: rev
operators:
  - {uid: in, type: kafka, brokers: [localhost:9092], topic: words}
  - {uid: r, type: reverse, from: [in]}
  - {uid: out, type: print, from: [r]}
`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "job_test.yaml"), []byte(`
tests:
  - name: reversed
    inputs: {in: [{value: abc}]}
    expect: {out: [cba]}
  - name: wrong
    inputs: {in: [{value: abc}]}
    expect: {out: [abc]}
`), 0o644))
	run := func(opts ...flinkgo.Option) (int, string, string) {
		var out, errb bytes.Buffer
		code := flinkgo.Run(context.Background(), []string{"test", spec}, &out, &errb, opts...)
		return code, out.String(), errb.String()
	}
	code, _, stderr := run()
	assert.Equal(t, 3, code)
	assert.Contains(t, stderr, `job.yaml:5:20: operators[1].type: unknown operator type "reverse"`)

	code, stdout, stderr := run(flinkgo.WithOperators(reverse))
	assert.Equal(t, 1, code, stderr)
	assert.Contains(t, stdout, "PASS reversed (")
	assert.Contains(t, stdout, "FAIL wrong (")
	assert.Contains(t, stdout, `  missing     "abc"  (line 8)`)
	assert.Contains(t, stdout, `  unexpected  "cba"`)
	assert.Contains(t, stderr, "1 of 2 tests failed")
}

type reverseOp struct{}

func (reverseOp) Open(*runtime.Context) error { return nil }
func (reverseOp) Close() error                { return nil }

func (reverseOp) Process(b *runtime.Batch, out runtime.Output) error {
	for _, r := range b.Records {
		v := make([]byte, len(r.Value))
		for i, c := range r.Value {
			v[len(v)-1-i] = c
		}
		r.Value = v
		out.Emit(r)
	}
	return nil
}
