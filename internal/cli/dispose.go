package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/flinkgo/flinkgo/internal/checkpoint"
	"github.com/flinkgo/flinkgo/pkg/api"
)

func newDisposeCmd(g *globals) *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "dispose PATH",
		Short: "Delete a savepoint (its _metadata first, then the rest)",
		Long: `Delete a savepoint: its _metadata first, then the rest. --force also removes an incomplete
savepoint directory (no _metadata: a crash during a savepoint or a stop left it) or an abandoned
stop savepoint, as 'savepoint inspect' and the dashboard list them; nothing else.`,
		Args: args(1, 1),
		RunE: func(cmd *cobra.Command, a []string) error { return runDispose(cmd, g, a[0], force) },
	}
	cmd.Flags().BoolVar(&force, "force", false, "also remove an incomplete or abandoned savepoint directory")
	return cmd
}

func runDispose(cmd *cobra.Command, g *globals, path string, force bool) error {
	fsys, err := g.storageFS(path)
	if err != nil {
		return err
	}
	dir, m, err := checkpoint.Load(fsys, path)
	if err != nil {
		in, ierr := checkpoint.InspectIncomplete(fsys, path)
		if ierr != nil {
			return api.Errorf(api.CodeInvalid, "refusing to dispose of %s: %v", path, err)
		}
		if !force {
			return api.Errorf(api.CodeInvalid, "refusing to dispose of %s without --force: it is %s", in.Dir, in.Problem())
		}
		if err := checkpoint.DisposeIncomplete(fsys, in.Dir); err != nil {
			return fmt.Errorf("dispose %s: %w", in.Dir, err)
		}
		return printDisposed(cmd, g, in.Dir)
	}
	if m.Kind != "savepoint" && m.Kind != "stop-with-savepoint" {
		return api.Errorf(api.CodeInvalid, "refusing to dispose of %s: it is a %s, owned by the daemon (retention deletes checkpoints)", dir, m.Kind)
	}
	if err := checkpoint.Dispose(fsys, dir); err != nil {
		return fmt.Errorf("dispose %s: %w", dir, err)
	}
	return printDisposed(cmd, g, dir)
}

func printDisposed(cmd *cobra.Command, g *globals, dir string) error {
	if g.json() {
		return printJSON(cmd.OutOrStdout(), map[string]string{"disposed": dir})
	}
	fmt.Fprintf(cmd.OutOrStdout(), "disposed %s\n", dir)
	return nil
}
