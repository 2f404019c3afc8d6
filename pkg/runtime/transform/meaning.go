package transform

import (
	"fmt"
	"strings"

	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// State schema versions of the keyed operators as a restore checks them
// (runtime.StateMeaning.Version): a count is an int64 per key; a reduce's
// acc is JSON per key, with its last event time when it has a ttl.
const (
	countStateVersion  = 1
	reduceStateVersion = 1
)

// normalize is an expression with its spaces collapsed: reformatting one
// does not change what it means.
func normalize(src string) string { return strings.Join(strings.Fields(src), " ") }

// reduceMeaning is what a reduce's state means: the init its accs started
// from and the ttl its keys are forgotten after; and its expr, whose change
// is safe (the accs go on folding under the new one, as a changed function
// does in Flink) and said so.
func reduceMeaning(o reduceOptions) *runtime.StateMeaning {
	m := &runtime.StateMeaning{Version: reduceStateVersion, Values: map[string]string{"expr": normalize(o.Expr)}, Judge: judgeReduce}
	if o.Init != "" {
		m.Values["init"] = normalize(o.Init)
	}
	if o.TTL != nil {
		m.Values["ttl"] = o.TTL.D().String()
	}
	return m
}

func judgeReduce(name, was, now string) (bool, string) {
	switch name {
	case "expr":
		return true, "the restored accs go on folding under the new expr (each key's acc is what the old one made of its records so far)"
	case "init":
		return false, fmt.Sprintf("the snapshot's accs started from init %s: keys restored would go on from it while new keys start from %s, so one output would mix both", orNone(was), orNone(now))
	case "ttl":
		return false, fmt.Sprintf("the snapshot's keys were kept (and timed) for ttl %s, not %s: keys would be forgotten at the wrong time or never", orNone(was), orNone(now))
	}
	return false, ""
}

func orNone(v string) string {
	if v == "" {
		return "(none)"
	}
	return v
}
