package engine_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// A source whose plan skips bad timestamps (as the NATS source's
// onInvalid: skip does) loses only the records whose eventTime.timestamp
// fails: the others arrive in order with their times, and the skipped ones
// are counted.
func TestBadTimestampsSkipped(t *testing.T) {
	var vals [][]byte
	var want []string
	for i := range 1500 {
		switch {
		case i%7 == 3:
			vals = append(vals, fmt.Appendf(nil, `{"t":"not a time","i":%d}`, i))
		case i%500 == 499:
			vals = append(vals, fmt.Appendf(nil, `{"i":%d}`, i)) // no t at all
		default:
			v := fmt.Sprintf(`{"t":%d,"i":%d}`, 1000+i, i)
			vals, want = append(vals, []byte(v)), append(want, v)
		}
	}
	src := runtime.Definition{Type: "test-fixed", Kind: api.KindSource, Doc: "test only",
		Configure: func(c *runtime.ConfigContext) *runtime.Plan {
			c.Decode(&struct{}{})
			return &runtime.Plan{SkipBadTimestamps: true, NewSource: func() runtime.Source { return &fixedSource{vals: vals} }}
		}}
	name := runtimetest.UniqueName(t)
	j := runtimetest.Start(t, fmt.Sprintf(`
name: badts
parallelism: 1
operators:
  - {uid: src, type: test-fixed, eventTime: {timestamp: t, maxOutOfOrderness: 0s}}
  - {uid: out, type: test-collect, from: [src], name: %s}
`, name), runtimetest.Options{Types: slices.Concat(testTypes, []runtime.Definition{src})})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 20*time.Second), j.Info().Error)
	require.Equal(t, want, runtimetest.Values(name))
	var skipped int64
	for _, op := range j.Info().Operators {
		if op.UID == "src" {
			skipped = op.Metrics["numRecordsWithBadTimestampSkipped"]
		}
	}
	require.EqualValues(t, len(vals)-len(want), skipped)
}

// fixedSource emits vals, in batches as large as the engine's.
type fixedSource struct {
	vals [][]byte
	next int
}

func (s *fixedSource) Open(*runtime.Context) error { return nil }
func (s *fixedSource) Poll(b *runtime.Batch) error {
	for ; s.next < len(s.vals) && len(b.Records) < cap(b.Records); s.next++ {
		b.Records = append(b.Records, runtime.Record{Value: s.vals[s.next]})
	}
	if s.next == len(s.vals) {
		return runtime.ErrEndOfInput
	}
	return nil
}
func (s *fixedSource) SnapshotState(int64) error { return nil }
func (s *fixedSource) Close() error              { return nil }
