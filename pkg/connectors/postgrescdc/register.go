package postgrescdc

import (
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// Definitions returns the operator types of this package, for a
// runtime.Registry.
func Definitions() []runtime.Definition {
	return []runtime.Definition{
		{Type: "postgres-cdc", Kind: api.KindSource,
			Doc: "PostgreSQL change data capture (logical replication, pgoutput), Debezium JSON envelopes, the slot's LSN in checkpoints: " +
				"url, tables, slot, publication, snapshot (initial|never)",
			Configure: configure},
	}
}
