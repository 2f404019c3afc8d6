package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/client"
)

func newRunCmd(g *globals) *cobra.Command {
	var savepoint, requestID string
	var allowNonRestored, allowNonEmpty, allowDrained, dryRun bool
	waitRunning, envErr := defaultWaitRunning()
	cmd := &cobra.Command{
		Use:   "run [-s SAVEPOINT] JOB.yaml",
		Short: "Submit a job; prints its id once it is RUNNING",
		Example: `  flinkgo run configs/jobs/kafka-to-files.yaml
  flinkgo run -s ~/.flinkgo/savepoints/savepoint-3f2a1c-7-0a1b2c configs/jobs/kafka-to-files.yaml`,
		Long: `Validate and submit a job: a YAML spec, or a Flink SQL script (JOB.sql, planned into a spec:
docs/sql.md; flinkgo explain prints the plan). With -s it restores from a savepoint directory, its _metadata
file, or a retained checkpoint chk-<n> directory; state is matched by operator uid.
--dry-run prints the restore plan and exits 3 if the restore would fail.
A restore is refused when the job changes what an operator's state means
(a window's size, its aggregates, the keyBy expression feeding it, a
join's keys or bounds, ...: docs/restore.md), and when the savepoint was
written by stop --drain (--allow-drained takes it anyway).

A job's file sink must write into a directory no other job of the daemon
that has not ended writes; a new job (without -s) also needs an empty one
(or one where a job of this daemon that has ended left only its ownership
marker, having committed nothing), unless --allow-non-empty-output. Each run sends a fresh request id (or
--request-id) and retries with it when the daemon's answer is lost, so a
retry never creates a second job.

Once the job is RUNNING, run watches it for --wait-running (default 2s; 0:
not at all) and exits 1 with the error when its first attempt fails in
that time (a record or timer that fails a moment after the start); the job
then restarts by its restart strategy, or is FAILED. It says on stderr how
long it watched.`,
		Args: func(cmd *cobra.Command, a []string) error {
			if len(a) == 0 && savepoint != "" {
				return api.Errorf(api.CodeUsage, "run -s %s needs the job's spec file too: flinkgo run -s %s JOB.yaml (the savepoint holds the state; the spec says what runs)", savepoint, savepoint)
			}
			return args(1, 1)(cmd, a)
		},
		RunE: func(cmd *cobra.Command, a []string) error {
			if envErr != nil && !cmd.Flags().Changed("wait-running") {
				return envErr
			}
			src, err := readSpec(a[0])
			if err != nil {
				return err
			}
			if _, err := engine.Compile(g.types, a[0], src, g.defaults()); err != nil {
				return api.Invalid(err)
			}
			sp, err := absPath(savepoint)
			if err != nil {
				return err
			}
			// The daemon names the file in restore commands (cancel, the
			// dashboard): absolute, since it does not share our directory.
			file, err := absPath(a[0])
			if err != nil {
				return err
			}
			if requestID == "" {
				requestID = newRequestID()
			}
			req := api.SubmitRequest{Spec: string(src), File: file, SavepointPath: sp, AllowNonRestoredState: allowNonRestored,
				AllowDrained: allowDrained, AllowNonEmptyOutput: allowNonEmpty, DryRun: dryRun, RequestID: requestID}
			return g.withClient(cmd, 2*time.Minute, func(ctx context.Context, c *client.Client) error {
				resp, err := c.Submit(ctx, req)
				if errors.Is(err, client.ErrNoAnswer) && !dryRun {
					return api.Errorf(api.CodeUnavailable, "%v; the job may have been created before the daemon went away: once it is back, run the same command with --request-id %s, which answers with that job instead of creating a second one", err, requestID)
				}
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
				if resp.Plan != nil {
					for _, n := range append(resp.Plan.Notes, resp.Plan.Warnings...) {
						fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s\n", n)
					}
				}
				if g.json() {
					if err := printJSON(cmd.OutOrStdout(), map[string]any{"id": resp.ID, "state": resp.State}); err != nil {
						return err
					}
				} else {
					fmt.Fprintln(cmd.OutOrStdout(), resp.ID)
				}
				if err := startOutcome(ctx, cmd, c, resp, waitRunning); err != nil || resp.State != api.StateRunning {
					return err
				}
				return watchRunning(ctx, cmd, g, c, resp.ID, waitRunning)
			})
		},
	}
	cmd.Flags().StringVarP(&savepoint, "fromSavepoint", "s", "", "restore from this savepoint or retained checkpoint")
	cmd.Flags().BoolVarP(&allowNonRestored, "allow-non-restored-state", "n", false, "drop savepoint state of operators the job does not have")
	cmd.Flags().BoolVar(&allowDrained, "allow-drained", false, "restore a savepoint of stop --drain (refused otherwise: its windows and timers fired at the drain)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "validate and print the restore plan without starting")
	cmd.Flags().BoolVar(&allowNonEmpty, "allow-non-empty-output", false, "let the job write into output directories that hold other files or another (ended) job's output")
	cmd.Flags().DurationVar(&waitRunning, "wait-running", waitRunning, "after the start, watch the job this long and exit 1 if it fails meanwhile (0: do not watch; default $"+waitRunningEnv+", else 2s)")
	cmd.Flags().StringVar(&requestID, "request-id", "", "the submission's id (default: a fresh one): the same id again returns the job it created")
	return cmd
}

// waitRunningEnv, when set, is run's default --wait-running (a test
// harness or a script that watches jobs itself sets 0).
const waitRunningEnv = "FLINKGO_WAIT_RUNNING"

// defaultWaitRunning is how long run watches a started job by default:
// long enough for a failure on the first records or the first timers,
// unless $FLINKGO_WAIT_RUNNING says otherwise.
func defaultWaitRunning() (time.Duration, error) {
	v := os.Getenv(waitRunningEnv)
	if v == "" {
		return 2 * time.Second, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, api.Errorf(api.CodeUsage, "$%s=%q: want a duration such as 2s or 0", waitRunningEnv, v)
	}
	return d, nil
}

// startOutcome says how the job's start went: FAILED at start (a
// configuration error, such as a missing topic, fails the job without
// restarts) exits 1 with the reason; so does a first attempt that failed
// and is restarting, unless run does not watch the job (watch 0: a
// warning, exit 0).
func startOutcome(ctx context.Context, cmd *cobra.Command, c *client.Client, resp *api.SubmitResponse, watch time.Duration) error {
	if resp.State != api.StateFailed && resp.State != api.StateRestarting {
		return nil
	}
	info, _ := c.Info(ctx, resp.ID)
	if info == nil || info.State == "" {
		info = &api.JobInfo{ID: resp.ID, State: resp.State}
	}
	err := attemptFailed(info, "at start")
	if resp.State == api.StateRestarting && watch <= 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "warning: %v\n", err)
		return nil
	}
	return err
}

// watchRunning watches the RUNNING job id for d (client.WatchFirstAttempt)
// and exits 1 if its first attempt failed meanwhile; else it says on
// stderr how long it watched.
func watchRunning(ctx context.Context, cmd *cobra.Command, g *globals, c *client.Client, id string, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	start := time.Now()
	info, err := c.WatchFirstAttempt(ctx, id, d)
	if err != nil {
		return err
	}
	if client.FirstAttemptFailed(info) {
		return attemptFailed(info, fmt.Sprintf("%s after it started", time.Since(start).Round(100*time.Millisecond)))
	}
	if !g.json() {
		fmt.Fprintf(cmd.ErrOrStderr(), "job %s is %s: watched it for %s, no failure (--wait-running sets how long; flinkgo info %s shows how it goes)\n",
			id, info.State, time.Since(start).Round(100*time.Millisecond), id)
	}
	return nil
}

// attemptFailed is run's error for a job whose first attempt failed when:
// exit 1 with the error, and what becomes of the job.
func attemptFailed(info *api.JobInfo, when string) error {
	reason := ""
	if info.Error != "" {
		reason = ": " + info.Error
	}
	if info.State == api.StateFailed {
		return api.Errorf(api.CodeFailed, "job %s failed %s%s", info.ID, when, reason)
	}
	return api.Errorf(api.CodeFailed, "job %s failed %s and is restarting by its restart strategy%s (flinkgo info %s shows how it goes; flinkgo cancel %s stops it)",
		info.ID, when, reason, info.ID, info.ID)
}

// readSpec reads a job spec file: one that does not exist is "not found"
// (exit 4), one that cannot be read a failure.
func readSpec(file string) ([]byte, error) {
	src, err := os.ReadFile(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, api.Errorf(api.CodeNotFound, "job spec %s does not exist", file)
	case err != nil:
		return nil, api.Errorf(api.CodeFailed, "read job spec: %v", err)
	}
	return src, nil
}

// newRequestID is a fresh submission id.
func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
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
		if m.Problem != "" {
			typ := m.Type
			if m.NewType != "" {
				typ = m.Type + " -> " + m.NewType
			}
			fmt.Fprintf(w, "  REFUSED  %-20s %-10s %d bytes: %s\n", m.UID, typ, m.Bytes, m.Problem)
			continue
		}
		fmt.Fprintf(w, "  matched  %-20s %-10s %s, %d bytes\n", m.UID, m.Type, par, m.Bytes)
		for _, o := range m.Outputs {
			fmt.Fprintf(w, "           writes into %s: %s\n", o.Path, o.Effect)
		}
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
	for _, n := range p.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	for _, warn := range p.Warnings {
		fmt.Fprintf(w, "  WARNING  %s\n", warn)
	}
	if len(p.Problems) == 0 {
		fmt.Fprintln(w, "the restore can go ahead")
	}
}
