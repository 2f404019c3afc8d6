package cli

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/flinkgo/flinkgo/internal/config"
	"github.com/flinkgo/flinkgo/internal/daemon"
	"github.com/flinkgo/flinkgo/pkg/api"
)

func newDaemonCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "daemon",
		Short:   "Run the flinkgo daemon in the foreground (the local cluster)",
		Example: `  flinkgo daemon --config ./flinkgo.yaml > daemon.log 2>&1 &`,
		Long: `Run the daemon: it keeps its state in $FLINKGO_HOME (default ~/.flinkgo), serves the
control API on $FLINKGO_HOME/flinkgo.sock and on rest.address, runs submitted jobs and resumes
them after a restart or crash. SIGINT/SIGTERM stop it: each running job is stopped with a savepoint
(daemon.shutdown-savepoint-timeout bounds it) and left SUSPENDED; the next start resumes
it from that savepoint (--restore-on-start).`,
		Args: args(0, 0),
	}
	cmd.Flags().String("rest-address", "", "TCP address of the REST API and /metrics (rest.address; empty string disables)")
	cmd.Flags().String("checkpoints-dir", "", "state.checkpoints.dir")
	cmd.Flags().String("savepoints-dir", "", "state.savepoints.dir")
	restoreOnStart := cmd.Flags().Bool("restore-on-start", true, "resume the jobs suspended at the last shutdown (from their shutdown savepoints)")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		flags := map[string]*pflag.Flag{
			"rest.address":          cmd.Flags().Lookup("rest-address"),
			"state.checkpoints.dir": cmd.Flags().Lookup("checkpoints-dir"),
			"state.savepoints.dir":  cmd.Flags().Lookup("savepoints-dir"),
			"log.level":             cmd.Root().PersistentFlags().Lookup("log-level"),
		}
		cfg, err := config.Load(g.home(), g.config, flags)
		if err != nil {
			return err
		}
		syscall.Umask(cfg.Umask) // daemon.umask: before the daemon creates anything
		log := newLogger(cfg.LogLevel)
		holdGCFloor(cfg.GCHeapFloor)
		defer releaseGCFloor()
		faults, err := faultsFromEnv()
		if err != nil {
			return api.Errorf(api.CodeInvalid, "%v", err)
		}
		node, err := joinCluster(cfg, log)
		if err != nil {
			return err
		}
		if node != nil {
			defer node.Close() // after Shutdown: its jobs' last records are written and their elections given up
		}
		d, err := daemon.Start(daemon.Options{Config: cfg, Log: log, Stdout: cmd.OutOrStdout(), Faults: faults, RestoreOnStart: *restoreOnStart, Registry: g.types, Cluster: node})
		if err != nil {
			return err
		}
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
		defer signal.Stop(sig)
		select {
		case s := <-sig:
			log.Info().Str("signal", s.String()).Msg("shutting down")
		case <-cmd.Context().Done():
		}
		ctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownSavepointTimeout+10*time.Second)
		defer cancel()
		return d.Shutdown(ctx)
	}
	cmd.AddCommand(newDaemonDrainCmd(g))
	return cmd
}

// newLogger writes events to stderr: readable on a terminal, JSON lines
// otherwise.
func newLogger(level string) zerolog.Logger {
	lvl, err := zerolog.ParseLevel(level)
	if err != nil || level == "" {
		lvl = zerolog.InfoLevel
	}
	var w = zerolog.New(os.Stderr)
	if isatty.IsTerminal(os.Stderr.Fd()) {
		w = zerolog.New(zerolog.ConsoleWriter{Out: os.Stderr, TimeFormat: "15:04:05.000"})
	}
	return w.Level(lvl).With().Timestamp().Logger()
}
