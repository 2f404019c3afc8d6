package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/flinkgo/flinkgo/internal/dev/consume"
	"github.com/flinkgo/flinkgo/internal/dev/kafkabroker"
	"github.com/flinkgo/flinkgo/pkg/api"
)

func newDevConsumeCmd(g *globals) *cobra.Command {
	var brokers []string
	var topic, isolation, natsURL, subject string
	var count int64
	var follow bool
	cmd := &cobra.Command{
		Use:   "consume",
		Short: "Print the records of a Kafka topic (read_committed or not) or the messages of a NATS subject, one per line",
		Long: `Print the values of a Kafka topic's records, every partition from its start, or with
--nats the messages of a NATS subject (from the start of the JetStream stream that
captures it). Without --follow it stops at the end of what is there when it starts
(under read_committed: each partition's last stable offset). -o json prints one JSON
object per line with the partition, offset, key and timestamp as well.`,
		Example: `  flinkgo dev consume --topic out --count 3
  flinkgo dev consume --topic out --isolation read_uncommitted --follow
  flinkgo dev consume --nats nats://127.0.0.1:4222 --subject flink-test`,
		Args: args(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := untilSignal(cmd.Context())
			defer cancel()
			w := bufio.NewWriter(cmd.OutOrStdout())
			defer w.Flush()
			emit := func(r consume.Record) error {
				if !g.json() {
					_, err := fmt.Fprintf(w, "%s\n", r.Value)
					return err
				}
				out := map[string]any{"offset": r.Offset, "value": string(r.Value)}
				if natsURL == "" {
					out["partition"], out["key"] = r.Partition, string(r.Key)
				}
				if !r.Timestamp.IsZero() {
					out["timestamp"] = r.Timestamp.UTC().Format(time.RFC3339Nano)
				}
				line, err := json.Marshal(out)
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(w, "%s\n", line)
				return err
			}
			if count < 0 {
				return api.Errorf(api.CodeUsage, "--count must be 0 (no limit) or more, got %d", count)
			}
			var err error
			if natsURL != "" {
				if cmd.Flags().Changed("brokers") || cmd.Flags().Changed("topic") || cmd.Flags().Changed("isolation") {
					return api.Errorf(api.CodeUsage, "--nats reads a NATS subject (--subject); --brokers, --topic and --isolation are for Kafka")
				}
				_, err = consume.NATS(ctx, consume.NATSConfig{URL: natsURL, Subject: subject, Count: count, Follow: follow}, emit)
				return err
			}
			var committed bool
			switch isolation {
			case "read_committed":
				committed = true
			case "read_uncommitted":
			default:
				return api.Errorf(api.CodeUsage, "--isolation must be read_committed or read_uncommitted, got %q", isolation)
			}
			_, err = consume.Kafka(ctx, consume.KafkaConfig{Brokers: brokers, Topic: topic, ReadCommitted: committed,
				Count: count, Follow: follow}, emit)
			return err
		},
	}
	cmd.Flags().StringSliceVar(&brokers, "brokers", []string{kafkabroker.DefaultListen}, "Kafka brokers")
	cmd.Flags().StringVar(&topic, "topic", "flink-test", "topic to read")
	cmd.Flags().StringVar(&isolation, "isolation", "read_committed", "read_committed (only committed records, up to the last stable offset) or read_uncommitted")
	cmd.Flags().StringVar(&natsURL, "nats", "", "read from this NATS server (nats://host:port) instead of Kafka")
	cmd.Flags().StringVar(&subject, "subject", "flink-test", "NATS subject to read (with --nats)")
	cmd.Flags().Int64Var(&count, "count", 0, "stop after this many records (0: no limit)")
	cmd.Flags().BoolVar(&follow, "follow", false, "keep reading new records until interrupted")
	return cmd
}
