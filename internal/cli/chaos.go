package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/internal/jobchaos"
	"github.com/flinkgo/flinkgo/pkg/api"
)

func newChaosCmd(g *globals) *cobra.Command {
	var kills, stopRestores int
	var window, timeout time.Duration
	var seed uint64
	var allowNondet, keep bool
	cmd := &cobra.Command{
		Use:   "chaos JOB.yaml --kills N [--stop-restore M] [--duration D] [--seed S]",
		Short: "Run a bounded job undisturbed and under kill -9s in a private daemon, compare the committed outputs; exit 1 if they differ",
		Example: `  flinkgo chaos job.yaml --kills 5
  flinkgo chaos job.yaml --kills 10 --stop-restore 2 --seed 42 -o json`,
		Long: `Run a bounded job twice in a private daemon (its own home and socket, this
binary run as a child process, no REST port): once undisturbed, once while
the daemon is killed N times (SIGKILL at a random moment, or an exit at a
fault point of the checkpoint and commit protocol) and the job goes through
M stop → run -s cycles. Then compare what each sink committed in the two
runs: a file sink's finished files, a Kafka sink's topic (read_committed for
an exactly-once sink), as multisets of rows. Identical outputs exit 0; lost,
duplicated, changed or unexpected rows exit 1, with the rows.

Sources must be replayable and bounded: datagen with count, nexmark with
events, kafka (read from startingOffsets to the topic's end at the start;
nobody may write the topic meanwhile). Sinks write private places per run:
file sinks a directory of the run, Kafka sinks a topic of the run on the
same brokers; the job's own outputs and consumer groups are not touched. An
at-least-once sink reports its duplicates. A job whose output depends on
timing (a processing-time window, now(), a watermark that follows the wall
clock) is refused, naming the operator, unless --allow-nondeterministic.
The seed (printed) replays the schedule: the faults' kinds, points and
moments. Exit 3 when the spec is invalid or cannot be run this way.
docs/testing-jobs.md#chaos.`,
		Args: args(1, 1),
		RunE: func(cmd *cobra.Command, a []string) error {
			if kills < 0 || stopRestores < 0 {
				return api.Errorf(api.CodeUsage, "--kills and --stop-restore count faults: give 0 or more")
			}
			if kills+stopRestores == 0 {
				return api.Errorf(api.CodeUsage, "no faults: give --kills N (and/or --stop-restore M), for example --kills 5")
			}
			if engine.IsSQL(a[0]) {
				// chaos rewrites the spec's sinks and sources; it reads YAML.
				return api.Errorf(api.CodeUsage, "chaos reads a YAML spec, not a SQL script: write the script's plan to one (flinkgo explain %s > job.yaml) and run chaos on that", a[0])
			}
			src, err := readSpec(a[0])
			if err != nil {
				return err
			}
			graph, err := engine.Compile(g.types, a[0], src, g.defaults())
			if err != nil {
				return api.Invalid(err)
			}
			job, err := jobchaos.Analyze(graph, a[0], src, g.types)
			if err != nil {
				return api.Invalid(err)
			}
			if len(job.Nondeterministic) > 0 && !allowNondet {
				return api.Invalid(job.NondeterministicError())
			}
			exe, err := os.Executable()
			if err != nil {
				return api.Errorf(api.CodeFailed, "find this binary to run its daemon: %v", err)
			}
			if !cmd.Flags().Changed("seed") {
				seed = uint64(time.Now().UnixNano())
			}
			// Ctrl-C ends the runs cleanly: the daemons are killed and the
			// private directories removed (the daemons die with this process
			// anyway, on Linux).
			sigCtx, stopSignals := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stopSignals()
			ctx, cancel := context.WithTimeout(sigCtx, timeout)
			defer cancel()
			o := jobchaos.Options{Exe: exe, Kills: kills, StopRestores: stopRestores, Window: window, Seed: seed, Keep: keep}
			if !g.json() {
				o.Progress = cmd.ErrOrStderr()
				fmt.Fprintf(cmd.ErrOrStderr(), "chaos %s: %d kills, %d stop-restores, seed %d (--seed %d replays the schedule)\n", a[0], kills, stopRestores, seed, seed)
			}
			rep, err := jobchaos.Run(ctx, job, o)
			if err != nil {
				switch {
				case sigCtx.Err() != nil:
					return api.Errorf(api.CodeFailed, "interrupted: the runs' daemons were killed and their directories removed")
				case errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil:
					return api.Errorf(api.CodeFailed, "chaos did not finish within --timeout %s", timeout)
				}
				return api.Errorf(api.CodeFailed, "%v", err)
			}
			if g.json() {
				if err := printJSON(cmd.OutOrStdout(), rep); err != nil {
					return err
				}
			} else {
				rep.WriteText(cmd.OutOrStdout())
			}
			if !rep.Identical {
				return &api.Error{Code: api.CodeFailed, Message: fmt.Sprintf("the disturbed run's outputs differ from the undisturbed run's (%d lost, %d duplicated, %d changed, %d unexpected)",
					rep.Lost, rep.Duplicated, rep.Changed, rep.Unexpected)}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&kills, "kills", 0, "kill -9s of the daemon (at random moments, or exits at fault points)")
	f.IntVar(&stopRestores, "stop-restore", 0, "stop-with-savepoint → run -s cycles")
	f.DurationVar(&window, "duration", 0, "a fault lands at a random moment within this long of the job's (re)start (default: the undisturbed run's job time divided by the number of faults)")
	f.Uint64Var(&seed, "seed", 0, "seed of the fault schedule (default: from the clock; printed)")
	f.BoolVar(&allowNondet, "allow-nondeterministic", false, "run a job whose output depends on timing anyway, and report")
	f.BoolVar(&keep, "keep", false, "keep the runs' directories (homes, daemon logs, specs, outputs) and print where")
	f.DurationVar(&timeout, "timeout", 10*time.Minute, "give up after this long")
	return cmd
}
