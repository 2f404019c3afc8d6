package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flinkgo/flinkgo/internal/dev/etcdserver"
)

func newDevEtcdCmd(_ *globals) *cobra.Command {
	var dataDir string
	var members int
	var ports []int
	cmd := &cobra.Command{
		Use:   "etcd",
		Short: "Run an embedded etcd for HA experiments (FOR DEVELOPMENT ONLY: loopback, no TLS, no auth)",
		Long: `Run embedded etcd members (go.etcd.io/etcd/server/v3) on 127.0.0.1 for local HA experiments:
point high-availability.etcd.endpoints at the URLs it prints. --members 3 runs a three-member
cluster in this one process (which shows quorum, not fault tolerance: it is one process).`,
		Example: `  flinkgo dev etcd
  flinkgo dev etcd --members 3 --data-dir /tmp/flinkgo-etcd`,
		Args: args(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(ports) == 0 && members == 1 {
				ports = []int{2379}
			}
			cl, err := etcdserver.Start(etcdserver.Config{Dir: dataDir, Members: members, ClientPorts: ports})
			if err != nil {
				return err
			}
			defer cl.Close()
			eps := strings.Join(cl.Endpoints(), ",")
			fmt.Fprintf(cmd.ErrOrStderr(), "development etcd (%d member(s), data in %s) serving at %s. Not for production. Ctrl-C stops it.\n", members, dataDir, eps)
			fmt.Fprintln(cmd.OutOrStdout(), eps)
			ctx, cancel := untilSignal(cmd.Context())
			defer cancel()
			<-ctx.Done()
			return nil
		},
	}
	cmd.Flags().StringVar(&dataDir, "data-dir", "flinkgo-etcd", "keep etcd's data here (it survives a restart)")
	cmd.Flags().IntVar(&members, "members", 1, "cluster size")
	cmd.Flags().IntSliceVar(&ports, "client-port", nil, "client port of each member on 127.0.0.1 (default 2379 for one member, free ports for more)")
	return cmd
}
