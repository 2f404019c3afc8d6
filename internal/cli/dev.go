package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/flinkgo/flinkgo/internal/dev/kafkabroker"
	"github.com/flinkgo/flinkgo/internal/dev/natsserver"
	"github.com/flinkgo/flinkgo/internal/dev/produce"
	"github.com/flinkgo/flinkgo/internal/dev/verify"
	"github.com/flinkgo/flinkgo/pkg/api"
)

func newDevCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Development helpers: embedded brokers, the sequence producer, the exactly-once checker",
		Example: `  flinkgo dev kafka --topic flink-test:1 &
  flinkgo dev produce --topic flink-test --rate 1000`,
	}
	cmd.AddCommand(newDevKafkaCmd(g), newDevNATSCmd(g), newDevS3Cmd(g), newDevEtcdCmd(g), newDevProduceCmd(g), newDevConsumeCmd(g), newDevVerifyCmd(g))
	return cmd
}

// untilSignal returns a context canceled by SIGINT or SIGTERM.
func untilSignal(parent context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
}

func newDevKafkaCmd(g *globals) *cobra.Command {
	var listen, dataDir string
	var topics []string
	var autoCreate bool
	cmd := &cobra.Command{
		Use:   "kafka",
		Short: "Run an embedded Kafka-protocol broker (FOR DEVELOPMENT ONLY: one node, no security)",
		Example: `  flinkgo dev kafka --topic flink-test:1 --data-dir /tmp/kafka-data
  flinkgo dev kafka topics create clicks:4`,
		Long: `Run an embedded Kafka-protocol broker. Topics come from --topic, from
'flinkgo dev kafka topics create' while it runs, or are created with one partition when a
producer writes to a missing one (Kafka's auto.create.topics.enable; flinkgo dev produce asks
for it, flinkgo jobs never do, so a misspelt topic in a job is still an error).

Without --data-dir topics, records and group offsets live in memory and are gone when the
broker stops; with it they survive a restart.`,
		Args: args(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg := kafkabroker.Config{Listen: listen, DataDir: dataDir, AutoCreateTopics: autoCreate}
			for _, t := range topics {
				tp, err := kafkabroker.ParseTopic(t)
				if err != nil {
					return api.Errorf(api.CodeUsage, "--topic: %v", err)
				}
				cfg.Topics = append(cfg.Topics, tp)
			}
			b, err := kafkabroker.Start(cfg)
			if err != nil {
				return err
			}
			names := make([]string, len(cfg.Topics))
			for i, t := range cfg.Topics {
				names[i] = t.String()
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "development Kafka broker listening on %s (topics: %s; auto-create on produce: %s; %s). Not for production. Ctrl-C stops it.\n",
				b.Addr(), orNone(strings.Join(names, ", ")), onOff(autoCreate), dataNote(dataDir))
			fmt.Fprintln(cmd.OutOrStdout(), b.Addr())
			ctx, cancel := untilSignal(cmd.Context())
			defer cancel()
			<-ctx.Done()
			return b.Close()
		},
	}
	cmd.Flags().StringVar(&listen, "listen", kafkabroker.DefaultListen, "address to listen on")
	cmd.Flags().StringArrayVar(&topics, "topic", nil, "topic to create, as name:partitions (repeatable)")
	cmd.Flags().StringVar(&dataDir, "data-dir", "", "keep topics, records and group offsets here so they survive a restart (default: in memory, lost at stop)")
	cmd.Flags().BoolVar(&autoCreate, "auto-create-topics", true, "create a missing topic (one partition) when a producer asks for it, as Kafka does by default")
	cmd.AddCommand(newDevKafkaTopicsCmd(g))
	return cmd
}

// dataNote says where a development broker keeps its data.
func dataNote(dataDir string) string {
	if dataDir == "" {
		return "data IN MEMORY: topics, records and offsets are lost when it stops; --data-dir DIR keeps them"
	}
	return "data in " + dataDir
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// verifyPath checks a file sink's output, local or in object storage.
func (g *globals) verifyPath(path, field string) (*verify.Report, error) {
	store, err := g.storageFS(path)
	if err != nil {
		return nil, err
	}
	return verify.Run(verify.Options{Path: path, Field: field, Store: store})
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func newDevNATSCmd(g *globals) *cobra.Command {
	var listen, storeDir string
	var streams []string
	cmd := &cobra.Command{
		Use:     "nats",
		Short:   "Run an embedded NATS server with JetStream (FOR DEVELOPMENT ONLY: one node, no security)",
		Example: `  flinkgo dev nats --stream events:events.>`,
		Args:    args(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg := natsserver.Config{Listen: listen, StoreDir: storeDir}
			var names []string
			for _, s := range streams {
				st, err := natsserver.ParseStream(s)
				if err != nil {
					return api.Errorf(api.CodeUsage, "--stream: %v", err)
				}
				cfg.Streams = append(cfg.Streams, st)
				names = append(names, s)
			}
			srv, err := natsserver.Start(cfg)
			if err != nil {
				return err
			}
			store := storeDir
			if store == "" {
				store = "memory"
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "development NATS server (JetStream) listening on %s (streams: %s; store: %s). Not for production. Ctrl-C stops it.\n",
				srv.URL(), orNone(strings.Join(names, " ")), store)
			fmt.Fprintln(cmd.OutOrStdout(), srv.URL())
			ctx, cancel := untilSignal(cmd.Context())
			defer cancel()
			<-ctx.Done()
			return srv.Close()
		},
	}
	cmd.Flags().StringVar(&listen, "listen", natsserver.DefaultListen, "address to listen on")
	cmd.Flags().StringVar(&storeDir, "store-dir", "", "keep streams and consumers here (default: in memory)")
	cmd.Flags().StringArrayVar(&streams, "stream", nil, "stream to create, as name:subject[,subject...] (repeatable)")
	return cmd
}

func newDevProduceCmd(g *globals) *cobra.Command {
	var brokers []string
	var topic, natsURL, subject string
	var start, count int64
	var rate float64
	var recs recordFlags
	var autoCreate bool
	cmd := &cobra.Command{
		Use:   "produce",
		Short: `Write {"idx": N} (or --events, or an --expr of idx) for N = start, start+1, ... to a Kafka topic or, with --nats, a NATS subject`,
		Example: `  flinkgo dev produce --topic flink-test --rate 1000 --count 100000
  flinkgo dev produce --nats nats://127.0.0.1:4222 --subject events.clicks --events`,
		Args: args(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			records, err := recs.maker(cmd.Flags(), start)
			if err != nil {
				return err
			}
			ctx, cancel := untilSignal(cmd.Context())
			defer cancel()
			last := time.Now()
			progress := func(sent, idx int64) {
				if time.Since(last) >= time.Second || (count > 0 && sent == count) {
					fmt.Fprintf(cmd.ErrOrStderr(), "produced %d records (last idx %d)\n", sent, idx)
					last = time.Now()
				}
			}
			var sent int64
			if natsURL != "" {
				if cmd.Flags().Changed("brokers") || cmd.Flags().Changed("topic") {
					return api.Errorf(api.CodeUsage, "--nats writes to a NATS subject (--subject); --brokers and --topic are for Kafka")
				}
				cfg := natsserver.ProduceConfig{URL: natsURL, Subject: subject, Start: start, Count: count, Rate: rate, Records: records, Progress: progress}
				if err := cfg.Validate(); err != nil {
					return api.Errorf(api.CodeUsage, "%v", err)
				}
				sent, err = natsserver.Produce(ctx, cfg)
			} else {
				cfg := produce.Config{Brokers: brokers, Topic: topic, CreateTopic: autoCreate, Start: start, Count: count, Rate: rate, Records: records, Progress: progress}
				if err := cfg.Validate(); err != nil {
					return api.Errorf(api.CodeUsage, "%v", err)
				}
				sent, err = produce.Run(ctx, cfg)
			}
			if g.json() {
				_ = printJSON(cmd.OutOrStdout(), map[string]any{"sent": sent, "last": start + sent - 1})
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "%d records sent, idx %d..%d\n", sent, start, start+sent-1)
			}
			return err
		},
	}
	cmd.Flags().StringSliceVar(&brokers, "brokers", []string{kafkabroker.DefaultListen}, "Kafka brokers")
	cmd.Flags().StringVar(&topic, "topic", "flink-test", "topic to write to")
	cmd.Flags().BoolVar(&autoCreate, "auto-create-topic", true, "ask the broker to create a missing topic (Kafka's allow.auto.create.topics; the broker decides)")
	cmd.Flags().StringVar(&natsURL, "nats", "", "write to this NATS server (nats://host:port) instead of Kafka")
	cmd.Flags().StringVar(&subject, "subject", "flink-test", "NATS subject to publish to (with --nats)")
	cmd.Flags().Int64Var(&start, "start", 1, "first idx")
	cmd.Flags().Int64Var(&count, "count", 0, "records to write (0: until interrupted)")
	cmd.Flags().Float64Var(&rate, "rate", 1000, "records per second (0: as fast as possible)")
	recs.register(cmd.Flags())
	return cmd
}

func newDevVerifyCmd(g *globals) *cobra.Command {
	var path, field, topic, job string
	var brokers []string
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Check a file sink's finished files, or a Kafka topic's committed records, for gaps and duplicates in a sequence field",
		Example: `  flinkgo dev verify --path /tmp/flinkgo-out --field idx
  flinkgo dev verify --path /tmp/flinkgo-out --job $JOB
  flinkgo dev verify --path s3://bucket/out
  flinkgo dev verify --kafka out --brokers 127.0.0.1:9092`,
		Long: `Check a sequence field for gaps and duplicates in a file sink's finished files (--path, a
local directory or s3://bucket/prefix, read with the s3.* keys of the daemon's config) or in a
Kafka topic's committed records (--kafka).

--path names the job whose output it checked (the directory's ownership marker) and fails
when that job committed no file there: files older than the moment it took the directory
are earlier jobs' output. --job ID (or the job's name) also fails when the directory is
another job's.`,
		Args: args(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if (path == "") == (topic == "") {
				return api.Errorf(api.CodeUsage, "give --path (a file sink's directory) or --kafka TOPIC, one of them")
			}
			if cmd.Flags().Changed("job") && job == "" {
				return api.Errorf(api.CodeUsage, "--job is empty: give the id or name of the job whose output this is (an unset shell variable? JOB=$(flinkgo run ...) failed?)")
			}
			if job != "" && topic != "" {
				return api.Errorf(api.CodeUsage, "--job goes with --path: a Kafka topic names no job")
			}
			var rep *verify.Report
			var err error
			if topic != "" {
				ctx, cancel := untilSignal(cmd.Context())
				defer cancel()
				rep, err = verify.Kafka(ctx, verify.KafkaOptions{Brokers: brokers, Topic: topic, Field: field})
				path = "topic " + topic
			} else {
				rep, err = g.verifyPath(path, field)
			}
			if err != nil {
				return err
			}
			if g.json() {
				_ = printJSON(cmd.OutOrStdout(), rep)
			} else {
				rep.WriteText(cmd.OutOrStdout())
			}
			if !rep.OK() {
				return api.Errorf(api.CodeFailed, "%s: %d missing, %d duplicated, %d unparseable", path, rep.GapCount, rep.Duplicates, rep.Unparseable)
			}
			if err := rep.CheckOwner(path, job); err != nil {
				return api.Errorf(api.CodeFailed, "%v", err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&job, "job", "", "with --path: fail unless the output is this job's (id or name)")
	cmd.Flags().StringVar(&path, "path", "", "the file sink's base directory")
	cmd.Flags().StringVar(&topic, "kafka", "", "check this Kafka topic's committed records (read_committed) instead")
	cmd.Flags().StringSliceVar(&brokers, "brokers", []string{kafkabroker.DefaultListen}, "Kafka brokers (with --kafka)")
	cmd.Flags().StringVar(&field, "field", "idx", "JSON field holding the sequence number (empty: each line is the number)")
	return cmd
}
