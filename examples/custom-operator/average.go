package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/state"
)

// averageDefinition is the "average" operator type: after a keyBy, it keeps
// the count and total of a numeric field per key in keyed state and emits
// {"key": k, "count": n, "avg": a} for every record. Keyed state is
// checkpointed by the engine and redistributed by key group when a job is
// restored with another parallelism: the operator does nothing for it.
func averageDefinition() runtime.Definition {
	return runtime.Definition{
		Type: "average",
		Kind: api.KindOperator,
		Doc:  `running average per key (after keyBy) of a numeric JSON field: field; emits {"key", "count", "avg"}`,
		Configure: func(c *runtime.ConfigContext) *runtime.Plan {
			var o struct {
				Field string `yaml:"field,required"` // the JSON field to average
			}
			c.Decode(&o) // unknown options and a missing field are reported at their line
			if o.Field == "" {
				return nil
			}
			return &runtime.Plan{KeyedInput: true, NewOperator: func() runtime.Operator { return &average{field: o.Field} }}
		},
	}
}

// average is one subtask of the operator. Every method runs on the
// subtask's goroutine.
type average struct {
	field string
	ctx   *runtime.Context
	sums  *state.Value[sum]
	buf   []byte
}

// sum is the state kept per key.
type sum struct {
	Count int64
	Total float64
}

// sumCodec encodes a sum in snapshots: version byte, count, total.
type sumCodec struct{}

func (sumCodec) Append(dst []byte, s sum) []byte {
	dst = append(dst, 1)
	dst = binary.AppendVarint(dst, s.Count)
	return binary.LittleEndian.AppendUint64(dst, math.Float64bits(s.Total))
}

func (sumCodec) Decode(b []byte) (sum, error) {
	if len(b) < 2 || b[0] != 1 {
		return sum{}, fmt.Errorf("average state: unknown format")
	}
	n, k := binary.Varint(b[1:])
	if k <= 0 || len(b) != 1+k+8 {
		return sum{}, fmt.Errorf("average state: corrupt")
	}
	return sum{Count: n, Total: math.Float64frombits(binary.LittleEndian.Uint64(b[1+k:]))}, nil
}

// Open declares the keyed state; restored values are there from the start.
func (a *average) Open(ctx *runtime.Context) (err error) {
	a.ctx = ctx
	a.sums, err = runtime.NewValue(ctx, "sums", sumCodec{})
	return err
}

// Process updates each record's key and emits its running average. A record
// without the field, or with a non-numeric one, fails the job naming it.
func (a *average) Process(b *runtime.Batch, out runtime.Output) error {
	for _, r := range b.Records {
		v, err := a.value(r.Value)
		if err != nil {
			return err
		}
		a.ctx.SetCurrentKey(r.Key)
		s, _ := a.sums.Get()
		s.Count++
		s.Total += v
		a.sums.Put(s)
		if out == nil {
			continue
		}
		// Emitted records may share memory with the batch; a fresh slice
		// per record keeps them valid downstream.
		val := fmt.Appendf(nil, `{"key":%s,"count":%d,"avg":%s}`, strconv.Quote(string(r.Key)), s.Count,
			strconv.FormatFloat(s.Total/float64(s.Count), 'g', -1, 64))
		out.Emit(runtime.Record{Key: r.Key, Value: val, Timestamp: r.Timestamp})
	}
	return nil
}

func (a *average) value(raw []byte) (float64, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return 0, fmt.Errorf("average: record %q is not a JSON object", raw)
	}
	var v float64
	if err := json.Unmarshal(fields[a.field], &v); err != nil {
		return 0, fmt.Errorf("average: record %q: field %q is not a number", raw, a.field)
	}
	return v, nil
}

func (a *average) Close() error { return nil }
