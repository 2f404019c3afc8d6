package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/internal/spectest"
	"github.com/flinkgo/flinkgo/pkg/api"
)

func newValidateCmd(g *globals) *cobra.Command {
	var types bool
	cmd := &cobra.Command{
		Use:   "validate JOB.yaml...",
		Short: "Check job specs and SQL scripts (and tests files, JOB_test.yaml) without a daemon; exit 3 with every problem, 0 when valid",
		Example: `  flinkgo validate configs/jobs/*.yaml
  flinkgo validate --types`,
		Args: func(cmd *cobra.Command, a []string) error {
			if types {
				return nil
			}
			return args(1, -1)(cmd, a)
		},
		RunE: func(cmd *cobra.Command, a []string) error {
			if types {
				return printTypes(cmd, g)
			}
			all := api.SpecError{Errors: []api.FieldError{}} // [] in JSON when valid
			results := map[string]string{}
			missing := 0
			for _, file := range a {
				src, err := readSpec(file)
				if err != nil {
					all.Errors = append(all.Errors, api.FieldError{File: file, Msg: err.Error()})
					results[file] = "unreadable"
					if api.CodeOf(err) == api.CodeNotFound {
						missing++
					}
					continue
				}
				err = compileOrLoadTests(g, file, src)
				if err != nil {
					var se *api.SpecError
					if errors.As(err, &se) {
						all.Errors = append(all.Errors, se.Errors...)
					} else {
						all.Errors = append(all.Errors, api.FieldError{File: file, Msg: err.Error()})
					}
					results[file] = "invalid"
					continue
				}
				results[file] = "valid"
			}
			if g.json() {
				_ = printJSON(cmd.OutOrStdout(), map[string]any{"files": results, "errors": all.Errors})
			} else {
				for _, file := range a {
					if results[file] == "valid" {
						fmt.Fprintf(cmd.OutOrStdout(), "%s: valid\n", file)
					}
				}
			}
			if len(all.Errors) > 0 && len(all.Errors) == missing {
				return &api.Error{Code: api.CodeNotFound, Message: all.Error(), Details: all.Errors}
			}
			if len(all.Errors) > 0 {
				return api.Invalid(&all)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&types, "types", false, "list the operator types and their options")
	return cmd
}

// compileOrLoadTests checks file: a job spec, or, when it is a tests
// file beside its spec (job_test.yaml beside job.yaml), the tests against
// the spec as flinkgo test reads them, so `validate configs/jobs/*.yaml`
// checks both.
func compileOrLoadTests(g *globals, file string, src []byte) error {
	if specFile, ok := spectest.SpecFileFor(file, spectest.FileExists); ok {
		if spec, err := os.ReadFile(specFile); err == nil {
			_, err := spectest.Load(g.types, g.defaults(), specFile, spec, file, src)
			return err
		}
	}
	_, err := engine.Compile(g.types, file, src, g.defaults())
	return err
}

func printTypes(cmd *cobra.Command, g *globals) error {
	var list []map[string]string
	for _, d := range g.types.Definitions() {
		list = append(list, map[string]string{"type": d.Type, "kind": d.Kind.String(), "doc": d.Doc})
	}
	if g.json() {
		return printJSON(cmd.OutOrStdout(), list)
	}
	for _, d := range list {
		fmt.Fprintf(cmd.OutOrStdout(), "%-12s %-9s %s\n", d["type"], d["kind"], d["doc"])
	}
	return nil
}
