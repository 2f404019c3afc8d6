package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/client"
)

func newSavepointCmd(g *globals) *cobra.Command {
	var dispose string
	var force bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "savepoint JOB [TARGET_DIR]",
		Short: "Take a savepoint of a running job; prints its path",
		Example: `  flinkgo savepoint 3f2a
  flinkgo savepoint 3f2a /data/savepoints`,
		Long: `Take a savepoint under TARGET_DIR (default state.savepoints.dir, which defaults to
$FLINKGO_HOME/savepoints). The job keeps running. As in
Flink since 1.15, an intermediate savepoint is not a recovery point and commits no sink output.
-d PATH disposes of a savepoint (same as 'savepoint dispose PATH').`,
		Args: func(cmd *cobra.Command, a []string) error {
			if dispose != "" {
				return args(0, 0)(cmd, a)
			}
			return args(1, 2)(cmd, a)
		},
		RunE: func(cmd *cobra.Command, a []string) error {
			if dispose != "" {
				return runDispose(cmd, g, dispose, force)
			}
			target := ""
			if len(a) == 2 {
				var err error
				if target, err = absPath(a[1]); err != nil {
					return err
				}
			}
			return g.withClient(cmd, timeout, func(ctx context.Context, c *client.Client) error {
				fmt.Fprintf(cmd.ErrOrStderr(), "triggering savepoint for job %s...\n", a[0])
				resp, err := c.Savepoint(ctx, a[0], api.SavepointRequest{TargetDir: target})
				if err != nil {
					return err
				}
				if g.json() {
					return printJSON(cmd.OutOrStdout(), resp)
				}
				fmt.Fprintln(cmd.OutOrStdout(), resp.Path)
				if resp.RestoreCommand != "" {
					fmt.Fprintf(cmd.ErrOrStderr(), "restore with: %s\n", resp.RestoreCommand)
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVarP(&dispose, "dispose", "d", "", "dispose of the savepoint at this path")
	cmd.Flags().BoolVar(&force, "force", false, "with -d: also remove an incomplete or abandoned savepoint directory")
	cmd.Flags().DurationVar(&timeout, "timeout", 15*time.Minute, "give up waiting after this long")
	cmd.AddCommand(newInspectCmd(g), newDisposeCmd(g))
	return cmd
}
