// Package cli holds flinkgo's commands, one file each. A command parses its
// flags, makes one typed client call (or one local operation), prints
// through cmd.OutOrStdout(), and returns an error that main maps to an exit
// code (api.Code.ExitCode).
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/flinkgo/flinkgo/internal/config"
	"github.com/flinkgo/flinkgo/internal/daemon"
	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/client"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// globals are the flags every command takes.
type globals struct {
	// types are the operator types of this binary.
	types    *runtime.Registry
	address  string
	config   string
	output   string
	logLevel string
}

// NewRoot builds the command tree of a binary that knows the operator types
// of reg.
func NewRoot(reg *runtime.Registry) *cobra.Command {
	g := &globals{types: reg}
	root := &cobra.Command{
		Use:   "flinkgo",
		Short: "Flink-style streaming jobs with exactly-once checkpoints, on one machine",
		Example: `  flinkgo daemon > daemon.log 2>&1 &
  JOB=$(flinkgo run configs/jobs/kafka-to-files.yaml)
  flinkgo stop $JOB`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			switch g.output {
			case "text", "json":
				return nil
			}
			return api.Errorf(api.CodeUsage, "-o must be text or json, got %q", g.output)
		},
	}
	pf := root.PersistentFlags()
	pf.StringVar(&g.address, "address", "", "daemon address: a unix socket path or http://host:port (default $FLINKGO_ADDRESS, else $FLINKGO_HOME/flinkgo.sock)")
	pf.StringVar(&g.config, "config", "", "config file (default $FLINKGO_HOME/flinkgo.yaml)")
	pf.StringVarP(&g.output, "output", "o", "text", "output format: text or json")
	pf.StringVar(&g.logLevel, "log-level", "", "log level: debug, info, warn or error")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &api.Error{Code: api.CodeUsage, Message: err.Error()}
	})
	root.AddCommand(newDaemonCmd(g), newRunCmd(g), newListCmd(g), newInfoCmd(g), newCancelCmd(g),
		newSavepointCmd(g), newStopCmd(g), newCheckpointsCmd(g), newValidateCmd(g), newVersionCmd(g), newDevCmd(g),
		newUICmd(g), newLogsCmd(g), newTestCmd(g), newChaosCmd(g), newExplainCmd(g))
	return root
}

// args validates the number of positional arguments as a usage error.
func args(min, max int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		if len(a) < min || (max >= 0 && len(a) > max) {
			return &api.Error{Code: api.CodeUsage, Message: fmt.Sprintf("usage: %s", cmd.UseLine())}
		}
		return nil
	}
}

func (g *globals) home() string { return config.DefaultHome() }

// defaults are the job defaults of the local config, so a spec validated
// here is judged as the daemon will judge it (an unreadable config is the
// daemon's problem to report; validation then uses Flink's defaults).
func (g *globals) defaults() engine.Defaults {
	cfg, err := config.Load(g.home(), g.config, nil)
	if err != nil {
		return engine.Defaults{}
	}
	return engine.Defaults{Checkpointing: &cfg.Checkpointing, Restart: &cfg.Restart, StateBackend: cfg.StateBackend, Incremental: cfg.StateIncremental}
}

// client connects to the daemon named by --address, $FLINKGO_ADDRESS or the
// socket in $FLINKGO_HOME. The bearer token is read from the home when the
// address is TCP.
func (g *globals) client() (*client.Client, error) {
	addr := g.address
	if addr == "" {
		addr = os.Getenv("FLINKGO_ADDRESS")
	}
	if addr == "" {
		addr = daemon.SocketPath(g.home())
	}
	token := os.Getenv("FLINKGO_TOKEN")
	if token == "" && strings.HasPrefix(addr, "http") {
		if b, err := os.ReadFile(daemon.TokenPath(g.home())); err == nil {
			token = strings.TrimSpace(string(b))
		}
	}
	return client.New(addr, token)
}

// withClient runs fn with a client and a context bounded by timeout.
func (g *globals) withClient(cmd *cobra.Command, timeout time.Duration, fn func(ctx context.Context, c *client.Client) error) error {
	c, err := g.client()
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
	defer cancel()
	return fn(ctx, c)
}

func (g *globals) json() bool { return g.output == "json" }

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// absPath makes a user-given path absolute (the daemon does not share our
// working directory); an s3:// URL is sent as it is, a file:// URL as its
// local path.
func absPath(p string) (string, error) {
	if p == "" {
		return "", nil
	}
	if vfs.IsObject(p) {
		return vfs.Clean(p), nil
	}
	a, err := filepath.Abs(vfs.Clean(p))
	if err != nil {
		return "", api.Errorf(api.CodeUsage, "path %q: %v", p, err)
	}
	return a, nil
}

// WriteError reports a command's error on w: as text ("error: ..."), or,
// when the command was given -o json, as JSON in the control API's shape
// with the exit code: {"error": {"code", "message", "details"}, "exitCode"}.
func WriteError(root *cobra.Command, w io.Writer, err error) {
	if f := root.PersistentFlags().Lookup("output"); f == nil || f.Value.String() != "json" {
		fmt.Fprintf(w, "error: %v\n", err)
		return
	}
	var e *api.Error
	if !errors.As(err, &e) {
		e = &api.Error{Code: api.CodeOf(err), Message: err.Error()}
		var se *api.SpecError
		if errors.As(err, &se) {
			e.Details = se.Errors
		}
	}
	if e.Message == "" {
		e.Message = err.Error()
	}
	if ExitCode(err) == api.CodeUsage.ExitCode() {
		e.Code = api.CodeUsage // cobra's own argument errors carry no code
	}
	_ = printJSON(w, struct {
		Error    *api.Error `json:"error"`
		ExitCode int        `json:"exitCode"`
	}{e, ExitCode(err)})
}

// ExitCode maps a command's error to the process exit code.
func ExitCode(err error) int {
	if err == nil {
		return 0
	}
	msg := err.Error()
	if strings.HasPrefix(msg, "unknown command") || strings.HasPrefix(msg, "unknown flag") ||
		strings.HasPrefix(msg, "unknown shorthand flag") || strings.Contains(msg, "requires at least") || strings.HasPrefix(msg, "accepts ") {
		return 2
	}
	return api.CodeOf(err).ExitCode()
}
