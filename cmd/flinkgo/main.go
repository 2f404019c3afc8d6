// Command flinkgo runs Flink-style streaming jobs on one machine.
package main

import (
	"fmt"
	"os"

	"github.com/flinkgo/flinkgo/internal/cli"
)

func main() {
	root := cli.NewRoot()
	err := root.Execute()
	if err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
	}
	os.Exit(cli.ExitCode(err))
}
