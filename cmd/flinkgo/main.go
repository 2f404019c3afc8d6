// Command flinkgo runs Flink-style streaming jobs on one machine.
package main

import "github.com/flinkgo/flinkgo/pkg/flinkgo"

func main() { flinkgo.Main() }
