package engine

import (
	"fmt"

	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// keyInputs applies a plan's InputKeys to v's inputs: each input becomes a
// hash edge partitioned by its own key selector, so an operator with
// several inputs (a join) keeps keyed state without keyBy operators before
// it, and the records of every input with one key reach one subtask (all
// inputs share the job's key groups). It reports whether v's input is now
// keyed.
func keyInputs(c *runtime.ConfigContext, v *Vertex) bool {
	keys := v.Plan.InputKeys
	if keys == nil {
		return false
	}
	if len(keys) != len(v.Inputs) {
		c.Errorf("", "%q (type %s) declares keys for %d inputs but has %d (bug in the operator type)", v.Op.UID, v.Op.Type, len(keys), len(v.Inputs))
		return false
	}
	for i := range v.Inputs {
		if keys[i] == nil {
			c.Errorf("", "%q (type %s) declares no key for input %d (bug in the operator type)", v.Op.UID, v.Op.Type, i)
			return false
		}
		v.Inputs[i].Part = Hash
		v.Inputs[i].Key = keys[i]
	}
	return true
}

// keyRecord sets r's key with sel for an edge that partitions by it.
func keyRecord(sel runtime.KeySelector, r *runtime.Record) error {
	k, err := sel.Key(r)
	if err != nil {
		return fmt.Errorf("key of a record for the next operator: %w", err)
	}
	r.Key = k
	return nil
}

// fail records the first error of the output; the subtask reads it after
// the call that emitted (Err).
func (o *output) fail(err error) {
	if o.err == nil {
		o.err = err
	}
}
