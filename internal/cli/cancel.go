package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/flinkgo/flinkgo/pkg/client"
)

func newCancelCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:     "cancel JOB",
		Short:   "Cancel a job now (hard stop); `stop` is the safe way to pause",
		Example: `  flinkgo cancel 3f2a`,
		Args:    args(1, 1),
		RunE: func(cmd *cobra.Command, a []string) error {
			return g.withClient(cmd, 2*time.Minute, func(ctx context.Context, c *client.Client) error {
				resp, err := c.Cancel(ctx, a[0])
				if err != nil {
					return err
				}
				if resp.Warning != "" {
					fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s\n", resp.Warning)
				}
				if g.json() {
					return printJSON(cmd.OutOrStdout(), resp)
				}
				fmt.Fprintln(cmd.OutOrStdout(), resp.State)
				return nil
			})
		},
	}
}
