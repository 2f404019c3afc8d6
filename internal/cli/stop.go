package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/client"
)

func newStopCmd(g *globals) *cobra.Command {
	var dir string
	var drain bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "stop JOB",
		Short: "Stop a job with a savepoint: final barrier, savepoint, commit, FINISHED; prints the savepoint path",
		Example: `  flinkgo stop 3f2a
  flinkgo stop --drain -p /data/savepoints 3f2a`,
		Args: args(1, 1),
		RunE: func(cmd *cobra.Command, a []string) error {
			target, err := absPath(dir)
			if err != nil {
				return err
			}
			return g.withClient(cmd, timeout, func(ctx context.Context, c *client.Client) error {
				fmt.Fprintf(cmd.ErrOrStderr(), "stopping job %s with a savepoint...\n", a[0])
				resp, err := c.Stop(ctx, a[0], api.SavepointRequest{TargetDir: target, Drain: drain})
				if err != nil {
					return err
				}
				if g.json() {
					return printJSON(cmd.OutOrStdout(), resp)
				}
				fmt.Fprintln(cmd.OutOrStdout(), resp.Path)
				switch {
				case resp.RestoreCommand != "":
					fmt.Fprintf(cmd.ErrOrStderr(), "restore with: %s\n", resp.RestoreCommand)
				case resp.NoRestore != "":
					fmt.Fprintf(cmd.ErrOrStderr(), "no restore command: %s\n", resp.NoRestore)
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVarP(&dir, "savepoint-path", "p", "", "target directory (default state.savepoints.dir, itself $FLINKGO_HOME/savepoints by default)")
	cmd.Flags().BoolVarP(&drain, "drain", "d", false, "end the input first so buffers and timers flush (end-of-input semantics)")
	cmd.Flags().DurationVar(&timeout, "timeout", 15*time.Minute, "give up waiting after this long")
	return cmd
}
