package cli

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/flinkgo/flinkgo/pkg/client"
)

func newCheckpointsCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:     "checkpoints JOB",
		Short:   "List a job's checkpoint history with counts and the latest completed",
		Example: `  flinkgo checkpoints 3f2a -o json`,
		Args:    args(1, 1),
		RunE: func(cmd *cobra.Command, a []string) error {
			return g.withClient(cmd, 30*time.Second, func(ctx context.Context, c *client.Client) error {
				cp, err := c.Checkpoints(ctx, a[0])
				if err != nil {
					return err
				}
				if g.json() {
					return printJSON(cmd.OutOrStdout(), cp)
				}
				out := cmd.OutOrStdout()
				fmt.Fprintf(out, "completed %d, failed %d, in progress %d\n", cp.Counts.Completed, cp.Counts.Failed, cp.Counts.InProgress)
				if l := cp.Latest.Completed; l != nil {
					fmt.Fprintf(out, "latest completed: %d at %s (%s)\n", l.ID, l.TriggerTime.Local().Format(time.RFC3339), l.Path)
				}
				if r := cp.Latest.Restored; r != nil {
					fmt.Fprintf(out, "restored from: %s %d (%s)\n", r.Kind, r.ID, r.Path)
				}
				w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
				fmt.Fprintln(w, "ID\tKIND\tSTATUS\tTRIGGERED\tDURATION\tSIZE\tFAILURE")
				for _, h := range cp.History {
					status := h.Status
					if h.Discarded {
						status += " (discarded)"
					}
					fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%dms\t%d\t%s\n", h.ID, h.Kind, status, h.TriggerTime.Local().Format("15:04:05.000"), h.DurationMs, h.Size, h.FailureReason)
				}
				return w.Flush()
			})
		},
	}
}
