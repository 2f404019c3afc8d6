// Command inactivity-alert is a flinkgo binary with a keyed process
// function of its own (alert.go): it alerts when a key has seen no event
// for 5 minutes of event time, with keyed state and event-time timers.
//
//	go build -o flinkgo-alert ./examples/inactivity-alert
//	./flinkgo-alert daemon &
//	./flinkgo-alert run examples/inactivity-alert/job.yaml
package main

import "github.com/flinkgo/flinkgo/pkg/flinkgo"

func main() { flinkgo.Main(flinkgo.WithOperators(alertDefinition())) }
