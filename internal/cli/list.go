package cli

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/client"
)

func newListCmd(g *globals) *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List running and recently ended jobs",
		Example: `  flinkgo list -a`,
		Args:    args(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withClient(cmd, 30*time.Second, func(ctx context.Context, c *client.Client) error {
				jobs, err := c.List(ctx, all)
				if err != nil {
					return err
				}
				if g.json() {
					return printJSON(cmd.OutOrStdout(), jobs)
				}
				if len(jobs) == 0 {
					fmt.Fprintln(cmd.OutOrStdout(), "no jobs")
					return nil
				}
				w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
				owners := slices.ContainsFunc(jobs, func(j api.JobInfo) bool { return j.Owner != "" })
				if owners { // HA mode: which daemon runs each job (OWNER, the word of -o json), and its pid
					fmt.Fprintln(w, "ID\tNAME\tSTATE\tSUBMITTED\tRESTARTS\tOWNER\tPID")
				} else {
					fmt.Fprintln(w, "ID\tNAME\tSTATE\tSUBMITTED\tRESTARTS")
				}
				for _, j := range jobs {
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d", j.ID, j.Name, j.State, j.SubmitTime.Local().Format("2006-01-02 15:04:05"), j.Restarts)
					if owners {
						fmt.Fprintf(w, "\t%s\t%s", orDash(j.Owner), pidText(j.OwnerPID))
					}
					fmt.Fprintln(w)
				}
				return w.Flush()
			})
		},
	}
	cmd.Flags().BoolVarP(&all, "all", "a", false, "also jobs that ended more than an hour ago")
	return cmd
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// pidText is a daemon's process id, "-" when unknown.
func pidText(pid int) string {
	if pid == 0 {
		return "-"
	}
	return strconv.Itoa(pid)
}
