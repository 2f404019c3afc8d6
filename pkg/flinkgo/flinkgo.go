// Package flinkgo runs the whole flinkgo command line (daemon, run,
// savepoint, stop, dev tools, …) from a program of your own, so that a
// binary can carry operator types written in Go beside the built-in ones:
//
//	func main() {
//		flinkgo.Main(flinkgo.WithOperators(dedupe.Definition()))
//	}
//
// The daemon and the CLI of such a binary know the extra types: job specs
// name them by their Type, `flinkgo validate --types` lists them, and
// savepoints of jobs using them restore like any other. Run the daemon and
// submit jobs with the same binary (a CLI without the types refuses specs
// that use them).
package flinkgo

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/flinkgo/flinkgo/internal/cli"
	"github.com/flinkgo/flinkgo/pkg/connectors/all"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// Option configures the binary.
type Option func(*settings)

type settings struct {
	extra []runtime.Definition
}

// WithOperators adds operator types to the built-in ones. A type may not
// take the name of a built-in type of the same kind.
func WithOperators(defs ...runtime.Definition) Option {
	return func(s *settings) { s.extra = append(s.extra, defs...) }
}

// Registry returns the operator types a binary built with opts knows.
func Registry(opts ...Option) (*runtime.Registry, error) {
	var s settings
	for _, o := range opts {
		o(&s)
	}
	return runtime.NewRegistry(append(all.Definitions(), s.extra...)...)
}

// Run executes the command line args (without the program name), printing
// to stdout and stderr, and returns the process exit code (0 ok, 1 failed,
// 2 usage, 3 invalid spec or config, 4 not found, 5 daemon unreachable, 7
// wrong job state).
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, opts ...Option) int {
	reg, err := Registry(opts...)
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 2
	}
	root := cli.NewRoot(reg)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err = root.ExecuteContext(ctx)
	if err != nil {
		cli.WriteError(root, stderr, err)
	}
	return cli.ExitCode(err)
}

// Main runs the command line of os.Args and exits with its code.
func Main(opts ...Option) {
	os.Exit(Run(context.Background(), os.Args[1:], os.Stdout, os.Stderr, opts...))
}
