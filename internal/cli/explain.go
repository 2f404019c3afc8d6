package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/pkg/api"
)

func newExplainCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "explain JOB.sql",
		Short: "Print the job spec a Flink SQL script plans into (the operators it runs); exit 3 with every problem",
		Example: `  flinkgo explain configs/jobs/nexmark-sql/q1.sql
  flinkgo explain job.sql > job.yaml   # the same job, as a spec`,
		Long: `Plan a Flink SQL script (docs/sql.md) and print the flinkgo job spec it becomes:
one operator per line, each with the script line of the statement that made it. The
spec is checked as run and validate check it; what it prints runs as is with flinkgo run.`,
		Args: args(1, 1),
		RunE: func(cmd *cobra.Command, a []string) error {
			if !engine.IsSQL(a[0]) {
				return api.Errorf(api.CodeUsage, "explain reads a SQL script (a .sql file), not %s: a YAML spec is its own plan", a[0])
			}
			src, err := readSpec(a[0])
			if err != nil {
				return err
			}
			p, err := engine.PlanSQL(a[0], src)
			if err != nil {
				return api.Invalid(err)
			}
			if _, err := engine.Compile(g.types, a[0], src, g.defaults()); err != nil {
				return api.Invalid(err)
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), map[string]any{"file": a[0], "spec": p.Spec})
			}
			_, err = fmt.Fprint(cmd.OutOrStdout(), p.Spec)
			return err
		},
	}
}
