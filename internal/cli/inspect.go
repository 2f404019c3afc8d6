package cli

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/flinkgo/flinkgo/internal/checkpoint"
	"github.com/flinkgo/flinkgo/pkg/api"
)

func newInspectCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:     "inspect PATH",
		Short:   "Describe a savepoint or checkpoint: operators, state sizes, keys, source positions, pending commits",
		Example: `  flinkgo savepoint inspect ~/.flinkgo/savepoints/savepoint-3f2a1c-7-0a1b2c`,
		Args:    args(1, 1),
		RunE: func(cmd *cobra.Command, a []string) error {
			fsys, err := g.storageFS(a[0])
			if err != nil {
				return err
			}
			dir, m, err := checkpoint.Load(fsys, a[0])
			if err != nil {
				if in, ierr := checkpoint.InspectIncomplete(fsys, a[0]); ierr == nil {
					return printIncomplete(cmd, g, in)
				}
				return notSnapshot(err)
			}
			verr := checkpoint.Verify(fsys, dir, m)
			if g.json() {
				out := map[string]any{"path": dir, "jobId": m.JobID, "jobName": m.JobName, "checkpointId": m.CheckpointID,
					"kind": m.Kind, "timestamp": m.Timestamp, "maxParallelism": m.MaxParallelism, "size": m.Size(),
					"specFingerprint": m.SpecFingerprint, "operators": m.Operators, "complete": verr == nil}
				if verr != nil {
					out["problem"] = verr.Error()
				}
				if err := printJSON(cmd.OutOrStdout(), out); err != nil {
					return err
				}
			} else {
				printInspect(cmd, dir, m, verr)
			}
			if verr != nil {
				return api.Errorf(api.CodeInvalid, "%s is incomplete: %v", dir, verr)
			}
			return nil
		},
	}
}

// printIncomplete describes a savepoint directory a crash left without
// _metadata (or whose stop was abandoned) and fails: it is no savepoint.
func printIncomplete(cmd *cobra.Command, g *globals, in *checkpoint.Incomplete) error {
	if g.json() {
		if err := printJSON(cmd.OutOrStdout(), map[string]any{"path": in.Dir, "complete": false, "incomplete": true,
			"abandoned": in.Abandoned, "files": in.Files, "size": in.Bytes, "problem": in.Problem()}); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(cmd.OutOrStdout(), "path:    %s\nPROBLEM: %s\n", in.Dir, in.Problem())
	}
	return api.Errorf(api.CodeInvalid, "%s is not a usable savepoint: %s", in.Dir, in.Problem())
}

func notSnapshot(err error) error {
	return api.Errorf(api.CodeNotFound, "%v", err)
}

func printInspect(cmd *cobra.Command, dir string, m *checkpoint.Metadata, verr error) {
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "%s %d of job %q (%s)\n", m.Kind, m.CheckpointID, m.JobName, m.JobID)
	fmt.Fprintf(out, "path:            %s\n", dir)
	fmt.Fprintf(out, "taken:           %s (%s ago)\n", m.Timestamp.Local().Format(time.RFC3339), time.Since(m.Timestamp).Round(time.Second))
	fmt.Fprintf(out, "max parallelism: %d\n", m.MaxParallelism)
	fmt.Fprintf(out, "state size:      %d bytes\n", m.Size())
	if n, incremental := m.CheckpointedSize(); incremental {
		fmt.Fprintf(out, "incremental:     yes: it wrote %d bytes; the pebble files it shares with earlier checkpoints are in %s (this directory alone does not restore)\n", n, checkpoint.SharedDir(dir))
	}
	if verr != nil {
		fmt.Fprintf(out, "PROBLEM:         %v\n", verr)
	} else {
		fmt.Fprintf(out, "complete:        yes (every state file present with its checksum)\n")
	}
	if m.Drained {
		fmt.Fprintf(out, "drained:         yes (stop --drain fired every window and timer: run -s refuses it unless --allow-drained)\n")
	}
	fmt.Fprintln(out)
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "UID\tTYPE\tPARALLELISM\tBYTES\tKEYS\tKEYS WITH TIMERS")
	for _, op := range m.Operators {
		fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%d\t%d\n", op.UID, op.Type, op.Parallelism, op.Size(), op.Keys(), op.TimerKeys())
	}
	_ = w.Flush()
	printMeanings(out, m)
	for _, op := range m.Operators {
		for _, h := range op.Subtasks {
			if len(h.Details) == 0 {
				continue
			}
			keys := make([]string, 0, len(h.Details))
			for k := range h.Details {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				fmt.Fprintf(out, "  %s[%d] %s: %s\n", op.UID, h.Subtask, k, human(h.Details[k]))
			}
		}
	}
}

// printMeanings lists what each operator's state means, as the snapshot
// recorded it (a restore refuses a job that changes it).
func printMeanings(out io.Writer, m *checkpoint.Metadata) {
	for _, op := range m.Operators {
		if op.State == nil || len(op.State.Meaning) == 0 {
			continue
		}
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(op.State.Meaning)) {
			parts = append(parts, fmt.Sprintf("%s=%q", k, op.State.Meaning[k]))
		}
		fmt.Fprintf(out, "  %s state (version %d): %s\n", op.UID, op.State.Version, strings.Join(parts, ", "))
	}
}
