package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/client"
)

func newRunCmd(g *globals) *cobra.Command {
	var savepoint string
	var allowNonRestored, dryRun bool
	cmd := &cobra.Command{
		Use:   "run [-s SAVEPOINT] JOB.yaml",
		Short: "Submit a job; prints its id once it is RUNNING",
		Long: `Validate and submit a job. With -s it restores from a savepoint directory, its _metadata
file, or a retained checkpoint chk-<n> directory; state is matched by operator uid.
--dry-run prints the restore plan and exits 3 if the restore would fail.`,
		Args: args(1, 1),
		RunE: func(cmd *cobra.Command, a []string) error {
			src, err := os.ReadFile(a[0])
			if err != nil {
				return api.Errorf(api.CodeUsage, "read job spec: %v", err)
			}
			if _, err := engine.Compile(g.types, a[0], src, g.defaults()); err != nil {
				return api.Invalid(err)
			}
			sp, err := absPath(savepoint)
			if err != nil {
				return err
			}
			req := api.SubmitRequest{Spec: string(src), File: a[0], SavepointPath: sp, AllowNonRestoredState: allowNonRestored, DryRun: dryRun}
			return g.withClient(cmd, 2*time.Minute, func(ctx context.Context, c *client.Client) error {
				resp, err := c.Submit(ctx, req)
				if dryRun {
					if resp != nil && resp.Plan != nil {
						printPlan(cmd, g, resp.Plan)
					} else if err == nil {
						fmt.Fprintln(cmd.OutOrStdout(), "the job is valid; nothing to restore (no -s given)")
					}
					return err
				}
				if err != nil {
					return err
				}
				if g.json() {
					return printJSON(cmd.OutOrStdout(), map[string]any{"id": resp.ID, "state": resp.State})
				}
				fmt.Fprintln(cmd.OutOrStdout(), resp.ID)
				if resp.State == api.StateFailed {
					info, _ := c.Info(ctx, resp.ID)
					msg := "job failed at start"
					if info != nil && info.Error != "" {
						msg += ": " + info.Error
					}
					return api.Errorf(api.CodeFailed, "%s", msg)
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVarP(&savepoint, "fromSavepoint", "s", "", "restore from this savepoint or retained checkpoint")
	cmd.Flags().BoolVarP(&allowNonRestored, "allow-non-restored-state", "n", false, "drop savepoint state of operators the job does not have")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "validate and print the restore plan without starting")
	return cmd
}

func printPlan(cmd *cobra.Command, g *globals, p *api.RestorePlan) {
	if g.json() {
		_ = printJSON(cmd.OutOrStdout(), p)
		return
	}
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "restore from %s (%s %d)\n", p.From, p.Kind, p.ID)
	for _, m := range p.Matched {
		par := fmt.Sprintf("parallelism %d", m.NewParallelism)
		if m.OldParallelism != m.NewParallelism {
			par = fmt.Sprintf("parallelism %d -> %d (rescaled)", m.OldParallelism, m.NewParallelism)
		}
		fmt.Fprintf(w, "  matched  %-20s %-10s %s, %d bytes\n", m.UID, m.Type, par, m.Bytes)
	}
	for _, d := range p.Dropped {
		verb := "DROPPED"
		if !p.AllowDrop {
			verb = "UNMATCHED"
		}
		fmt.Fprintf(w, "  %-8s %-20s %-10s %d bytes\n", verb, d.UID, d.Type, d.Bytes)
	}
	for _, n := range p.New {
		fmt.Fprintf(w, "  new      %-20s (starts empty)\n", n)
	}
	if len(p.Problems) == 0 {
		fmt.Fprintln(w, "the restore can go ahead")
	}
}
