package kafka_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// produceValues writes values to partition 0 of topic with franz-go,
// which puts nil on the wire as a null value (a tombstone) and []byte{}
// as an empty one.
func produceValues(t *testing.T, addr, topic string, values ...[]byte) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic))
	require.NoError(t, err)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	for _, v := range values {
		require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Value: v, Partition: 0}).FirstErr())
	}
}

// Null and empty values through the Kafka source (docs/values.md): the
// client (kafka-go) reports a tombstone and an empty value alike, as no
// value. Format raw emits them as records with an empty value; format json
// skips them and counts them in recordsWithoutValue (apart from invalid
// JSON, which onDecodeError handles: a blank value is invalid), or fails
// the job with onMissingValue: fail.
func TestNullAndEmptyValues(t *testing.T) {
	values := [][]byte{[]byte(`{"idx": 1}`), nil, {}, []byte(" "), []byte(`{"idx": 2}`)}
	for _, tc := range []struct {
		name, options   string
		want            []string
		missing, failed int64
		err             string
	}{
		{"raw", "", []string{`{"idx": 1}`, "", "", " ", `{"idx": 2}`}, 0, 0, ""},
		{"json skips them apart from invalid values", "format: json, onDecodeError: skip", []string{`{"idx": 1}`, `{"idx": 2}`}, 2, 1, ""},
		{"json fails on the blank value", "format: json", nil, 2, 0, `in/0 offset 3: value is not valid JSON`},
		{"json with onMissingValue: fail", "format: json, onMissingValue: fail", nil, 0, 0,
			"in/0 offset 1: the record has no value (a tombstone, or an empty value: the Kafka client reports them alike) and onMissingValue is fail"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := startBroker(t, "in:1")
			produceValues(t, b.Addr(), "in", values...)
			name := runtimetest.UniqueName(t)
			j := runtimetest.Start(t, simpleJob(b.Addr(), name, "bounded: latest, "+tc.options), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
			if tc.err != "" {
				require.Equal(t, api.StateFailed, runtimetest.Wait(t, j, waitFor))
				assert.Contains(t, j.Info().Error, tc.err)
				return
			}
			require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, waitFor), j.Info().Error)
			assert.Equal(t, tc.want, runtimetest.Values(name))
			m := operator(t, j, "in").Metrics
			assert.Equal(t, tc.missing, m["recordsWithoutValue"])
			assert.Equal(t, tc.failed, m["recordsSkipped"])
		})
	}
}

// The Kafka sink writes a record without value and one with an empty
// value alike, as a null value (kafka-go's writer does): on a compacted
// topic that is a tombstone.
func TestSinkWritesEmptyValuesAsNull(t *testing.T) {
	b := startBroker(t, "in:1", "out:1")
	produceValues(t, b.Addr(), "in", []byte("a"), nil, []byte("b"))
	j := runtimetest.Start(t, fmt.Sprintf(`
name: sink-values
operators:
  - {uid: in, type: kafka, brokers: [%s], topic: in, bounded: latest}
  - {uid: m, type: map, from: [in], expr: 'value == "a" ? "" : value'}
  - {uid: out, type: kafka, from: [m], brokers: [%s], topic: out}
`, b.Addr(), b.Addr()), runtimetest.Options{Types: testTypes})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, waitFor), j.Info().Error)
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.ConsumeTopics("out"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	require.NoError(t, err)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	var got []string
	for len(got) < 3 && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			if r.Value == nil {
				got = append(got, "null")
			} else {
				got = append(got, fmt.Sprintf("%q", r.Value))
			}
		})
	}
	require.Equal(t, []string{"null", "null", `"b"`}, got)
}
