package cli

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/client"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

func newInfoCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:     "info JOB",
		Short:   "Show a job's state, error, checkpoints and per-operator records",
		Example: `  flinkgo info 3f2a`,
		Args:    args(1, 1),
		RunE: func(cmd *cobra.Command, a []string) error {
			return g.withClient(cmd, 30*time.Second, func(ctx context.Context, c *client.Client) error {
				info, err := c.Info(ctx, a[0])
				if err != nil {
					return err
				}
				if g.json() {
					return printJSON(cmd.OutOrStdout(), info)
				}
				printInfo(cmd, info)
				if ex, err := c.Exceptions(ctx, info.ID); err == nil {
					printExceptions(cmd, ex, infoExceptionsShown)
				}
				return nil
			})
		},
	}
}

func printInfo(cmd *cobra.Command, info *api.JobInfo) {
	w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "id:\t%s\n", info.ID)
	fmt.Fprintf(w, "name:\t%s\n", info.Name)
	fmt.Fprintf(w, "state:\t%s\n", info.State)
	if info.Owner != "" {
		fmt.Fprintf(w, "owner:\t%s (pid %s)\n", info.Owner, pidText(info.OwnerPID))
	}
	if info.Error != "" {
		fmt.Fprintf(w, "error:\t%s\n", info.Error)
	}
	if info.RootCause != "" && info.RootCause != info.Error {
		fmt.Fprintf(w, "root cause:\t%s (the first of %d failures, %s)\n", info.RootCause, info.Failures, info.RootCauseTime.Local().Format(time.RFC3339))
	}
	fmt.Fprintf(w, "submitted:\t%s\n", info.SubmitTime.Local().Format(time.RFC3339))
	if info.EndTime != nil {
		fmt.Fprintf(w, "ended:\t%s\n", info.EndTime.Local().Format(time.RFC3339))
	}
	fmt.Fprintf(w, "restarts:\t%d (strategy %s)\n", info.Restarts, info.RestartStrategy.Type)
	if info.RestoredFrom != "" {
		fmt.Fprintf(w, "restored from:\t%s\n", info.RestoredFrom)
	}
	cp := info.Checkpointing
	if cp.Interval > 0 {
		fmt.Fprintf(w, "checkpointing:\tevery %s, %s, timeout %s, %s\n", cp.Interval, cp.Mode, cp.Timeout, cp.Externalized)
	} else {
		fmt.Fprintf(w, "checkpointing:\toff\n")
	}
	if c := info.Checkpoints; c != nil {
		fmt.Fprintf(w, "checkpoints:\t%d completed, %d failed, %d in progress\n", c.Completed, c.Failed, c.InProgress)
	}
	if l := info.LatestCheckpoint; l != nil {
		fmt.Fprintf(w, "latest checkpoint:\t%d, %d bytes, %dms, %s\n", l.ID, l.Size, l.DurationMs, l.Path)
		if s := l.Storage; s != nil {
			fmt.Fprintf(w, "  object storage:\t%d requests, %d bytes uploaded\n", s.Requests, s.BytesUploaded)
		}
	}
	if s := info.Storage; s != nil {
		fmt.Fprintf(w, "object storage:\t%d requests (%d failed), %d bytes uploaded, %d downloaded\n", s.Requests, s.FailedRequests, s.BytesUploaded, s.BytesDownloaded)
	}
	_ = w.Flush()
	fmt.Fprintln(cmd.OutOrStdout())
	t := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
	eventTime := false
	for _, op := range info.Operators {
		eventTime = eventTime || op.InputWatermark != nil || op.OutputWatermark != nil
	}
	header := "OPERATOR\tTYPE\tPARALLELISM\tRECORDS IN\tRECORDS OUT\tBUSY\tBACKPRESSURED\tIDLE"
	if eventTime {
		header += "\tWATERMARK IN\tWATERMARK OUT\tLAG"
	}
	fmt.Fprintln(t, header+"\tMETRICS")
	for _, op := range info.Operators {
		metrics := ""
		for _, k := range api.SortedKeys(op.Metrics) {
			metrics += fmt.Sprintf("%s=%d ", k, op.Metrics[k])
		}
		row := fmt.Sprintf("%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s", op.UID, op.Type, op.Parallelism, op.RecordsIn, op.RecordsOut,
			share(info, op.BusyTimeMsPerSecond), share(info, op.BackPressuredTimeMsPerSecond), share(info, op.IdleTimeMsPerSecond))
		if eventTime {
			lag := "-"
			if op.WatermarkLagMs != nil {
				lag = lagText(*op.WatermarkLagMs)
			}
			row += fmt.Sprintf("\t%s\t%s\t%s", watermarkText(op.InputWatermark), watermarkText(op.OutputWatermark), lag)
		}
		fmt.Fprintf(t, "%s\t%s\n", row, metrics)
	}
	_ = t.Flush()
	for _, op := range info.Operators {
		for _, p := range op.Problems {
			fmt.Fprintf(cmd.OutOrStdout(), "PROBLEM %s %s\n", op.UID, p)
		}
		for _, k := range api.SortedKeys(op.Texts) {
			fmt.Fprintf(cmd.OutOrStdout(), "%s %s:", op.UID, k)
			for i, v := range op.Texts[k] {
				fmt.Fprintf(cmd.OutOrStdout(), " [%d] %s", i, v)
			}
			fmt.Fprintln(cmd.OutOrStdout())
		}
	}
}

// share shows a share of time (ms per second, the largest over the
// operator's subtasks) as a percentage; "-" when the job is not running.
func share(info *api.JobInfo, msPerSec int64) string {
	if !info.State.Active() {
		return "-"
	}
	return fmt.Sprintf("%d%%", (msPerSec+5)/10)
}

// lagText shows how far a watermark is behind the clock, to a readable
// precision.
func lagText(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	switch {
	case d < time.Minute:
		return d.Round(time.Millisecond).String()
	case d < 48*time.Hour:
		return d.Round(time.Second).String()
	}
	return fmt.Sprintf("%dd", d/(24*time.Hour))
}

// watermarkText shows a watermark for humans: a time, "end" for the final
// one, "-" for none yet.
func watermarkText(w *int64) string {
	switch {
	case w == nil:
		return "-"
	case *w == runtime.MaxWatermark:
		return "end"
	}
	return time.UnixMilli(*w).UTC().Format("2006-01-02T15:04:05.000Z")
}

// infoExceptionsShown is how many of the last failures info lists.
const infoExceptionsShown = 5

// printExceptions lists the newest n failures of a job's exception history.
func printExceptions(cmd *cobra.Command, ex *api.JobExceptions, n int) {
	if len(ex.Entries) == 0 {
		return
	}
	out := cmd.OutOrStdout()
	shown := ex.Entries[:min(n, len(ex.Entries))]
	title := "FAILURES (newest first)"
	if len(shown) < len(ex.Entries) || ex.Truncated {
		title = fmt.Sprintf("FAILURES (the last %d, newest first; GET /v1/jobs/{id}/exceptions has more)", len(shown))
	}
	fmt.Fprintf(out, "\n%s\n", title)
	for _, e := range shown {
		fmt.Fprintf(out, "%s  attempt %d  %s\n", e.Time.Local().Format(time.RFC3339), e.Attempt, e.Exception)
	}
}
