package runtime_test

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/state"
)

// Same decides whether a failure is the previous attempt's record failing
// again: the content and place must match; the ordinal only when both
// attempts replayed from the same checkpoint.
func TestRecordFailureSame(t *testing.T) {
	base := runtime.RecordFailure{Operator: "f", Subtask: 0, Restored: 3, Index: 17, Fingerprint: 42}
	with := func(change func(*runtime.RecordFailure)) *runtime.RecordFailure {
		f := base
		change(&f)
		return &f
	}
	for _, c := range []struct {
		name string
		next *runtime.RecordFailure
		same bool
	}{
		{"the same record at the same place", with(func(*runtime.RecordFailure) {}), true},
		{"after a newer checkpoint, at another ordinal", with(func(f *runtime.RecordFailure) { f.Restored, f.Index = 5, 4 }), true},
		{"same checkpoint, another ordinal: another record", with(func(f *runtime.RecordFailure) { f.Index = 18 }), false},
		{"another content", with(func(f *runtime.RecordFailure) { f.Fingerprint = 43 }), false},
		{"another subtask", with(func(f *runtime.RecordFailure) { f.Subtask = 1 }), false},
		{"another operator", with(func(f *runtime.RecordFailure) { f.Operator = "g" }), false},
		{"no failure", nil, false},
	} {
		assert.Equal(t, c.same, base.Same(c.next), c.name)
	}
	var none *runtime.RecordFailure
	assert.False(t, none.Same(&base))
}

type sideCollector struct{ main, side []runtime.Record }

func (s *sideCollector) Emit(r runtime.Record) { s.main = append(s.main, r) }
func (s *sideCollector) EmitTo(tag string, r runtime.Record) {
	if tag == runtime.ErrorOutput {
		s.side = append(s.side, r)
	}
}

// RecordError: the position counts the subtask's input since the attempt
// started; fail returns it, skip counts, sideOutput sends a dead letter.
func TestRecordErrorPolicies(t *testing.T) {
	b := runtime.NewBatch()
	for _, v := range []string{`{"a": 1}`, `not json`, `{"a": 3}`} {
		b.Records = append(b.Records, runtime.Record{Key: []byte("k"), Value: []byte(v)})
	}
	in := new(atomic.Int64)
	in.Store(10 + int64(len(b.Records))) // 10 records before this batch
	boom := errors.New("boom")

	ctx := runtime.NewContext(runtime.ContextOptions{UID: "f", Subtask: 2, RecordsIn: in, Restored: true, RestoredCheckpoint: 7})
	err := ctx.RecordError(b, 1, nil, boom)
	f, ok := runtime.AsRecordFailure(err)
	require.True(t, ok)
	assert.Equal(t, int64(12), f.Index)
	assert.Equal(t, "12 of subtask 2 after checkpoint 7", f.Position())
	assert.ErrorIs(t, err, boom)
	assert.Equal(t, `record 12 after checkpoint 7 (value "not json"): boom`, err.Error())

	skip := runtime.NewContext(runtime.ContextOptions{UID: "f", OnError: runtime.OnErrorSkip, RecordsIn: in})
	require.NoError(t, skip.RecordError(b, 0, nil, boom))
	require.NoError(t, skip.RecordError(b, 2, nil, boom))
	vals, _ := skip.Metrics().Snapshot()
	assert.Equal(t, int64(2), vals[runtime.MetricErrorsSkipped])

	side := runtime.NewContext(runtime.ContextOptions{UID: "f", OnError: runtime.OnErrorSideOutput, RecordsIn: in})
	out := &sideCollector{}
	require.NoError(t, side.RecordError(b, 0, out, boom))
	require.NoError(t, side.RecordError(b, 1, out, boom))
	require.Len(t, out.side, 2)
	assert.Empty(t, out.main)
	assert.JSONEq(t, `{"error": "boom", "operator": "f", "subtask": 0, "position": "11 of subtask 0 since the start", "record": {"a": 1}}`, string(out.side[0].Value))
	assert.JSONEq(t, `{"error": "boom", "operator": "f", "subtask": 0, "position": "12 of subtask 0 since the start", "record": "not json"}`, string(out.side[1].Value))
	assert.Equal(t, "k", string(out.side[0].Key), "the dead letter keeps the record's key")
	vals, _ = side.Metrics().Snapshot()
	assert.Equal(t, int64(2), vals[runtime.MetricErrorsToSideOutput])
}

// An error a timer raises is a record failure naming the timer: the same
// timer failing in the next attempt (after another checkpoint too) is the
// same failure, another key's or time's is not; an error that suppresses
// restarts stays as it is.
func TestTimerFailure(t *testing.T) {
	ctx := func(restored int64, key string) *runtime.Context {
		kb := state.NewKeyedBackend(128, state.AllKeyGroups(128))
		c := runtime.NewContext(runtime.ContextOptions{UID: "p", Keyed: kb, MaxParallelism: 128, Restored: restored > 0, RestoredCheckpoint: restored})
		c.SetCurrentKey([]byte(key))
		return c
	}
	boom := errors.New("boom")
	first, ok := runtime.AsRecordFailure(runtime.TimerFailure(ctx(0, "k"), runtime.EventTime, 5000, boom))
	require.True(t, ok)
	assert.Equal(t, `event-time timer at 5000 of key "k" in subtask 0 since the start`, first.Position())
	assert.ErrorIs(t, first, boom)
	again, _ := runtime.AsRecordFailure(runtime.TimerFailure(ctx(3, "k"), runtime.EventTime, 5000, boom))
	assert.True(t, first.Same(again), "the same timer after a restart")
	other, _ := runtime.AsRecordFailure(runtime.TimerFailure(ctx(3, "j"), runtime.EventTime, 5000, boom))
	assert.False(t, first.Same(other), "another key's timer")
	later, _ := runtime.AsRecordFailure(runtime.TimerFailure(ctx(3, "k"), runtime.EventTime, 6000, boom))
	assert.False(t, first.Same(later), "another time")

	suppressed := runtime.SuppressRestarts(boom)
	assert.Equal(t, suppressed, runtime.TimerFailure(ctx(0, "k"), runtime.EventTime, 5000, suppressed))
	assert.NoError(t, runtime.TimerFailure(ctx(0, "k"), runtime.EventTime, 5000, nil))
}
