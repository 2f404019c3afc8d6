// Package discard is a sink that drops every record (for benchmarks and
// tests; the runtime still counts records in).
package discard

import (
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// Definitions returns the operator types of this package, for a
// runtime.Registry.
func Definitions() []runtime.Definition {
	return []runtime.Definition{
		{Type: "discard", Kind: api.KindSink,
			Doc: "drops every record (benchmarks)", Configure: func(c *runtime.ConfigContext) *runtime.Plan {
				var o struct{}
				c.Decode(&o)
				return &runtime.Plan{InputValues: runtime.ValuesDropped, NewOperator: func() runtime.Operator { return sink{} }}
			}},
	}
}

type sink struct{}

func (sink) Open(*runtime.Context) error                  { return nil }
func (sink) Process(*runtime.Batch, runtime.Output) error { return nil }
func (sink) Close() error                                 { return nil }
