// Package all registers every built-in operator and connector; the daemon
// and the CLI import it for its side effects.
package all

import (
	_ "github.com/flinkgo/flinkgo/pkg/connectors/datagen" // register
	_ "github.com/flinkgo/flinkgo/pkg/connectors/discard" // register
	_ "github.com/flinkgo/flinkgo/pkg/connectors/file"    // register
	_ "github.com/flinkgo/flinkgo/pkg/connectors/kafka"   // register
	_ "github.com/flinkgo/flinkgo/pkg/connectors/nats"    // register
	_ "github.com/flinkgo/flinkgo/pkg/connectors/print"   // register
	_ "github.com/flinkgo/flinkgo/pkg/runtime/transform"  // register
)
