package cli

import (
	"context"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/flinkgo/flinkgo/internal/config"
	"github.com/flinkgo/flinkgo/internal/daemon"
	"github.com/flinkgo/flinkgo/internal/ha"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/client"
)

func newDaemonDrainCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "drain",
		Short: "Move the daemon's jobs to the other daemons of its HA cluster (stop with savepoint, resumed elsewhere)",
		Long: `Drain the daemon at --address (HA mode only) for maintenance: it stops taking new jobs and stops each
of its running jobs with a savepoint; another daemon of the cluster resumes each job from that savepoint.
The daemon keeps running without jobs until it is stopped; when it starts again it takes jobs again.`,
		Example: `  flinkgo daemon drain --address http://127.0.0.1:8082`,
		Args:    args(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withClient(cmd, 10*time.Minute, func(ctx context.Context, c *client.Client) error {
				resp, err := c.Drain(ctx)
				if err != nil {
					return err
				}
				if g.json() {
					return printJSON(cmd.OutOrStdout(), resp)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "daemon %s drained: %d job(s) stopped with a savepoint, resumed by the other daemons\n", resp.Daemon, len(resp.Jobs))
				for _, id := range resp.Jobs {
					fmt.Fprintln(cmd.OutOrStdout(), id)
				}
				return nil
			})
		},
	}
}

// joinCluster connects a daemon to its HA cluster (nil outside HA mode).
// The daemon is known by its REST address, which the other daemons
// forward to.
func joinCluster(cfg *config.Config, log zerolog.Logger) (*ha.Node, error) {
	if cfg.HA.Type == "" {
		return nil, nil
	}
	host, port, err := net.SplitHostPort(cfg.RestAddress)
	if err != nil || port == "0" {
		return nil, api.Errorf(api.CodeInvalid, "HA mode needs rest.address with a fixed port (the cluster's daemons forward to it), got %q", cfg.RestAddress)
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		if host, err = os.Hostname(); err != nil {
			return nil, err
		}
	}
	addr := net.JoinHostPort(host, port)
	return ha.Start(ha.Config{Endpoints: cfg.HA.Endpoints, ClusterID: cfg.HA.ClusterID, LeaseTTL: cfg.HA.LeaseTTL,
		Name: addr, Addr: addr, PID: os.Getpid(), Log: log, JobRef: daemon.RecordRef})
}
