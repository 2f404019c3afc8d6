package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/flinkgo/flinkgo/internal/checkpoint"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

func newDisposeCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "dispose PATH",
		Short: "Delete a savepoint (its _metadata first, then the rest)",
		Args:  args(1, 1),
		RunE:  func(cmd *cobra.Command, a []string) error { return runDispose(cmd, g, a[0]) },
	}
}

func runDispose(cmd *cobra.Command, g *globals, path string) error {
	dir, m, err := checkpoint.Load(vfs.Default, path)
	if err != nil {
		return api.Errorf(api.CodeInvalid, "refusing to dispose of %s: %v", path, err)
	}
	if m.Kind != "savepoint" && m.Kind != "stop-with-savepoint" {
		return api.Errorf(api.CodeInvalid, "refusing to dispose of %s: it is a %s, owned by the daemon (retention deletes checkpoints)", dir, m.Kind)
	}
	if err := checkpoint.Dispose(vfs.Default, dir); err != nil {
		return fmt.Errorf("dispose %s: %w", dir, err)
	}
	if g.json() {
		return printJSON(cmd.OutOrStdout(), map[string]string{"disposed": dir})
	}
	fmt.Fprintf(cmd.OutOrStdout(), "disposed %s\n", dir)
	return nil
}
