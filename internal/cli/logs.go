package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/client"
)

// logsPoll is how often `logs -f` asks for more.
const logsPoll = 500 * time.Millisecond

func newLogsCmd(g *globals) *cobra.Command {
	var follow bool
	var lines int
	cmd := &cobra.Command{
		Use:   "logs JOB",
		Short: "Print the tail of a job's print output (stdout) and its recent events (stderr); -f follows",
		Long: `Print the tail of a job's print output (what its print sinks wrote, job.out) on stdout
and its recent events on stderr: state changes with the failure that caused them, restarts and
what they restored, failed checkpoints, savepoints, operator problems. With -f it keeps printing
what comes, until the job ends. -o json prints the answers as JSON, one per line with -f.`,
		Example: `  flinkgo logs 3f2a
  flinkgo logs 3f2a -f`,
		Args: args(1, 1),
		RunE: func(cmd *cobra.Command, a []string) error {
			n, note, err := tailLines(lines)
			if err != nil {
				return err
			}
			if note != "" {
				fmt.Fprintln(cmd.ErrOrStderr(), note)
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			defer c.Close()
			return followLogs(cmd, c, a[0], api.LogsQuery{Lines: n}, follow, g.json())
		},
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing new output and events until the job ends")
	cmd.Flags().IntVarP(&lines, "lines", "n", 100, fmt.Sprintf("how many lines of output and events to show first (at most %d; -f then prints everything after them)", api.LogsLinesMax))
	return cmd
}

// tailLines is the -n the daemon is asked for, and a note to print when
// it is less than what the user asked: one answer holds at most
// api.LogsLinesMax lines, and saying so beats a silent cut.
func tailLines(n int) (int, string, error) {
	switch {
	case n < 1:
		return 0, "", api.Errorf(api.CodeUsage, "-n %d: give a number of lines from 1 to %d", n, api.LogsLinesMax)
	case n > api.LogsLinesMax:
		return api.LogsLinesMax, fmt.Sprintf("(-n %d: showing the last %d lines, the most one answer holds; the job's whole print output is its job.out file, under $FLINKGO_HOME/jobs/ID/)", n, api.LogsLinesMax), nil
	}
	return n, "", nil
}

// followLogs prints the tail, then, with follow, what comes after it
// until the job ended and nothing is left to read.
func followLogs(cmd *cobra.Command, c *client.Client, id string, q api.LogsQuery, follow, asJSON bool) error {
	for {
		ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
		logs, err := c.Logs(ctx, id, q)
		cancel()
		if err != nil {
			return err
		}
		if asJSON {
			if err := printLogsJSON(cmd.OutOrStdout(), logs, follow); err != nil {
				return err
			}
		} else {
			printLogs(cmd.OutOrStdout(), cmd.ErrOrStderr(), logs)
		}
		idle := len(logs.Output) == 0 && len(logs.Events) == 0
		if !follow || (idle && !logs.State.Active()) {
			return nil
		}
		q.From = logs.Next()
		if idle {
			select {
			case <-cmd.Context().Done():
				return nil
			case <-time.After(logsPoll):
			}
		}
	}
}

func printLogs(out, errOut io.Writer, logs *api.JobLogs) {
	if logs.OutputSkipped > 0 {
		fmt.Fprintf(errOut, "(%d bytes of output were rotated away before they could be read)\n", logs.OutputSkipped)
	}
	for _, ev := range logs.Events {
		fmt.Fprintf(errOut, "%s %-7s %s\n", ev.Time.Local().Format("2006-01-02 15:04:05.000"), ev.Severity, ev.Message)
	}
	for _, l := range logs.Output {
		fmt.Fprintln(out, l)
	}
}

// printLogsJSON prints an answer indented, or, when following, on one
// line (a stream of JSON values), skipping empty ones.
func printLogsJSON(out io.Writer, logs *api.JobLogs, follow bool) error {
	if !follow {
		return printJSON(out, logs)
	}
	if len(logs.Output) == 0 && len(logs.Events) == 0 && logs.OutputSkipped == 0 {
		return nil
	}
	return json.NewEncoder(out).Encode(logs)
}
