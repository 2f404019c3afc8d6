package engine

import (
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// configureOnError applies an operator's onError to its plan, judged on
// the operator alone: the option applies only to types that report
// failing records (Plan.OnError), and sideOutput adds the side output
// "errors", which some operator must read (else the failed records would
// go nowhere, silently).
func configureOnError(c *runtime.ConfigContext, v *Vertex, ops []api.OperatorSpec) {
	switch {
	case v.Op.OnError == "":
		return
	case !v.Plan.OnError:
		c.Errorf("onError", "does not apply to %q (type %s): it reports no failing records of its own", v.Op.UID, v.Op.Type)
		return
	case v.Op.OnError != api.OnErrorSideOutput:
		return
	}
	v.Plan.SideOutputs = append(v.Plan.SideOutputs, runtime.ErrorOutput)
	if !readsSide(ops, v.Op.UID, runtime.ErrorOutput) {
		c.Errorf("onError", "sideOutput sends %q's failed records to its side output %q, and no operator reads it: add one with from: [%s.%s] (a file sink as a dead-letter directory, a kafka sink for a dead-letter topic), or use onError: skip",
			v.Op.UID, runtime.ErrorOutput, v.Op.UID, runtime.ErrorOutput)
	}
}

// readsSide reports whether an operator of the spec reads side output tag
// of uid.
func readsSide(ops []api.OperatorSpec, uid, tag string) bool {
	for _, op := range ops {
		for _, f := range op.From {
			if f == uid+"."+tag {
				return true
			}
		}
	}
	return false
}

// sideOutputHint is added to "has no side output" when the missing one is
// the errors output, which onError: sideOutput creates.
func sideOutputHint(tag string) string {
	if tag != runtime.ErrorOutput {
		return ""
	}
	return "; set onError: sideOutput on it to route its failing records there"
}
