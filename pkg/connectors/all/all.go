// Package all lists every built-in operator and connector type: what a
// flinkgo binary knows before a custom binary adds its own.
package all

import (
	"github.com/flinkgo/flinkgo/pkg/connectors/datagen"
	"github.com/flinkgo/flinkgo/pkg/connectors/discard"
	"github.com/flinkgo/flinkgo/pkg/connectors/file"
	"github.com/flinkgo/flinkgo/pkg/connectors/filesource"
	"github.com/flinkgo/flinkgo/pkg/connectors/kafka"
	"github.com/flinkgo/flinkgo/pkg/connectors/nats"
	"github.com/flinkgo/flinkgo/pkg/connectors/nexmark"
	"github.com/flinkgo/flinkgo/pkg/connectors/postgres"
	"github.com/flinkgo/flinkgo/pkg/connectors/postgrescdc"
	"github.com/flinkgo/flinkgo/pkg/connectors/print"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/runtime/join"
	"github.com/flinkgo/flinkgo/pkg/runtime/transform"
	"github.com/flinkgo/flinkgo/pkg/runtime/window"
)

// Definitions returns the built-in operator types.
func Definitions() []runtime.Definition {
	var out []runtime.Definition
	for _, defs := range [][]runtime.Definition{datagen.Definitions(), discard.Definitions(), file.Definitions(), filesource.Definitions(),
		kafka.Definitions(), nats.Definitions(), nexmark.Definitions(), postgres.Definitions(), postgrescdc.Definitions(), print.Definitions(), transform.Definitions(), window.Definitions(),
		join.Definitions()} {
		out = append(out, defs...)
	}
	return out
}

// Registry returns a registry of the built-in operator types.
func Registry() *runtime.Registry { return runtime.MustRegistry(Definitions()...) }
