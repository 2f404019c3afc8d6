package transform

import "github.com/flinkgo/flinkgo/pkg/runtime"

// Definitions returns the operator types of this package, for a
// runtime.Registry.
func Definitions() []runtime.Definition {
	return append(append([]runtime.Definition(nil), mapFilterDefs...), keyedDefs...)
}
