package engine

import (
	"fmt"
	"strings"

	"github.com/flinkgo/flinkgo/internal/checkpoint"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// keyMeaning is the StateMeaning name of the key expression of the keyBy
// feeding a keyed operator.
const keyMeaning = "key"

// stateMeaning is what v's snapshotted state means: its plan's, with the
// key expression of the keyBy (or keyBys, in input order) feeding it when
// it keeps state per key from a keyBy. nil: v has no plan.
func stateMeaning(v *Vertex) *runtime.StateMeaning {
	if v.Plan == nil {
		return nil
	}
	m := v.Plan.State
	if key := inputKeyExpr(v); key != "" {
		m = m.With(keyMeaning, key)
		m.Judge = judgeKey(m.Judge)
	}
	return m
}

// inputKeyExpr is the key expression of the keyBys v reads from ("" when
// v reads from none: a join keys its inputs itself, see Plan.InputKeys).
func inputKeyExpr(v *Vertex) string {
	if !v.Plan.KeyedInput || len(v.Plan.InputKeys) > 0 {
		return ""
	}
	var keys []string
	for _, in := range v.Inputs {
		if in.Part == Hash && in.From.Plan != nil && in.From.Plan.KeyExpr != "" {
			keys = append(keys, in.From.Plan.KeyExpr)
		}
	}
	return strings.Join(keys, " | ")
}

// judgeKey explains a changed key expression, and leaves other names to
// the operator's own judge.
func judgeKey(next func(name, was, now string) (bool, string)) func(name, was, now string) (bool, string) {
	return func(name, was, now string) (bool, string) {
		if name == keyMeaning {
			return false, fmt.Sprintf("the snapshot's state is stored per key of %s: under %s a record would find another key's state "+
				"(the windows open at the restore would mix old and new keys)", orNone(was), orNone(now))
		}
		if next == nil {
			return false, ""
		}
		return next(name, was, now)
	}
}

func orNone(v string) string {
	if v == "" {
		return "(none)"
	}
	return v
}

// recordMeaning is m as a snapshot records it (every operator gets one,
// so a snapshot without any was written before meanings were recorded).
func recordMeaning(m *runtime.StateMeaning) *checkpoint.StateRecord {
	if m == nil {
		return &checkpoint.StateRecord{}
	}
	return &checkpoint.StateRecord{Version: m.Version, Meaning: m.Values}
}

// judgeMeaning turns the changes of uid's state meaning into the problems
// that refuse the restore and the notes that explain a safe change. It is
// the whole decision, apart from where the old meaning came from.
func judgeMeaning(uid string, changes []runtime.MeaningChange) (problems, notes []string) {
	for _, c := range changes {
		if c.Safe {
			notes = append(notes, fmt.Sprintf("operator %q has %s %q in the snapshot and %q now: safe, %s", uid, c.Name, c.Was, c.Now, c.Why))
			continue
		}
		keep := fmt.Sprintf("keep %s %q", c.Name, c.Was)
		if c.Name == runtime.VersionName {
			keep = "restore it with the flinkgo that wrote it"
		}
		problems = append(problems, fmt.Sprintf("has %s %q in the snapshot and %q now: %s; %s, or give the operator a new uid to start it empty "+
			"(and pass --allow-non-restored-state to drop the state of %q)", c.Name, c.Was, c.Now, c.Why, keep, uid))
	}
	return problems, notes
}
