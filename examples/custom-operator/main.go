// Command custom-operator is a flinkgo binary with one operator type of its
// own, "average" (a running average per key, in average.go), beside the
// built-in ones. Build it, run its daemon, and submit job.yaml with it:
//
//	go build -o flinkgo-custom ./examples/custom-operator
//	./flinkgo-custom daemon &
//	./flinkgo-custom run examples/custom-operator/job.yaml
//
// Everything else (savepoint, stop, run -s, the dashboard) is flinkgo's.
package main

import "github.com/flinkgo/flinkgo/pkg/flinkgo"

func main() { flinkgo.Main(flinkgo.WithOperators(averageDefinition())) }
