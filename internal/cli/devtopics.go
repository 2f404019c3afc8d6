package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/flinkgo/flinkgo/internal/dev/kafkabroker"
	"github.com/flinkgo/flinkgo/internal/dev/topics"
	"github.com/flinkgo/flinkgo/pkg/api"
)

func newDevKafkaTopicsCmd(g *globals) *cobra.Command {
	var brokers []string
	cmd := &cobra.Command{
		Use:     "topics",
		Short:   "Create or list the topics of a running broker (flinkgo dev kafka or another)",
		Example: "  flinkgo dev kafka topics create clicks:4 views\n  flinkgo dev kafka topics list",
	}
	cmd.PersistentFlags().StringSliceVar(&brokers, "brokers", []string{kafkabroker.DefaultListen}, "Kafka brokers")
	create := &cobra.Command{
		Use:     "create NAME[:PARTITIONS]...",
		Short:   "Create topics (one partition unless :PARTITIONS)",
		Example: "  flinkgo dev kafka topics create clicks:4",
		Args:    args(1, -1),
		RunE: func(cmd *cobra.Command, a []string) error {
			ts := make([]kafkabroker.Topic, len(a))
			for i, s := range a {
				t, err := kafkabroker.ParseTopic(s)
				if err != nil {
					return api.Errorf(api.CodeUsage, "%v", err)
				}
				ts[i] = t
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), time.Minute)
			defer cancel()
			if err := topics.Create(ctx, brokers, ts); err != nil {
				return err
			}
			for _, t := range ts {
				fmt.Fprintln(cmd.OutOrStdout(), t)
			}
			return nil
		},
	}
	list := &cobra.Command{
		Use:     "list",
		Short:   "List topics with their partition counts",
		Example: "  flinkgo dev kafka topics list -o json",
		Args:    args(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), time.Minute)
			defer cancel()
			ts, err := topics.List(ctx, brokers)
			if err != nil {
				return err
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), ts)
			}
			for _, t := range ts {
				fmt.Fprintf(cmd.OutOrStdout(), "%s:%d\n", t.Name, t.Partitions)
			}
			return nil
		},
	}
	cmd.AddCommand(create, list)
	return cmd
}
