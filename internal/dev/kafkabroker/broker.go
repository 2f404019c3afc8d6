package kafkabroker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DefaultListen is the address a broker listens on when Config.Listen is
// empty: Kafka's usual port, loopback only.
const DefaultListen = "127.0.0.1:9092"

// adminTimeout bounds the few admin requests sent over the wire (AddPartitions).
const adminTimeout = 10 * time.Second

// Errors callers branch on. They are wrapped with the topic in question.
var (
	ErrClosed       = errors.New("kafka broker closed")
	ErrUnknownTopic = errors.New("unknown topic or partition")
	ErrTopicExists  = errors.New("topic already exists")
)

// Config configures a Broker. The zero value is a broker on DefaultListen
// with no topics and no persistence.
type Config struct {
	// Listen is the host:port to listen on, DefaultListen when empty.
	// "127.0.0.1:0" picks a free port; Broker.Addr reports it.
	Listen string

	// Nodes is the number of broker nodes (0 means 1). With more than one,
	// partition leaders and transaction coordinators are spread over the
	// nodes, as in a real cluster; the nodes after the first listen on
	// NodeListen (a free loopback port for each one not given).
	Nodes int

	// NodeListen are the addresses of nodes 2..Nodes, in order. Pass
	// Broker.Addrs()[1:] to restart a cluster on the same ports.
	NodeListen []string

	// Advertise is the host:port announced to clients in metadata, the
	// address they dial after bootstrapping. Empty means the address
	// actually listened on, with an unspecified host (":9092",
	// "0.0.0.0:9092") announced as 127.0.0.1.
	Advertise string

	// Topics are created at Start unless a topic of that name exists
	// already (loaded from DataDir); an existing topic is left as it is.
	Topics []Topic

	// AutoCreateTopics lets a metadata request create a topic it names
	// (with one partition), as a default Apache Kafka broker does. Off by
	// default so that a misspelt topic is an error rather than a new topic.
	AutoCreateTopics bool

	// DataDir, if set, persists topics, records and committed group
	// offsets there. Start on a DataDir a previous broker closed resumes
	// its state. Without DataDir everything lives in memory.
	DataDir string

	// SyncWrites fsyncs every produced batch (only with DataDir). Without
	// it data reaches the disk at Close or when the OS writes it back, like
	// Apache Kafka's default; a crash (not Close) may lose recent records.
	SyncWrites bool
}

// Broker is a running embedded broker. Its methods are safe for concurrent
// use; after Close they return ErrClosed.
type Broker struct {
	cluster *kfake.Cluster
	addr    string
	addrs   []string
	log     *errorLog

	mu     sync.RWMutex // held shared by admin calls, exclusively by Close
	closed bool
}

// Start starts a broker and creates cfg.Topics. It returns once the broker
// accepts connections. An address in use or an unreadable DataDir is an
// error; nothing is left running on error.
func Start(cfg Config) (*Broker, error) {
	for _, t := range cfg.Topics {
		if err := t.Validate(); err != nil {
			return nil, fmt.Errorf("kafka broker: topic %q: %w", t.Name, err)
		}
	}
	lns, err := listenAll(cfg)
	if err != nil {
		return nil, fmt.Errorf("kafka broker: %w", err)
	}
	log := &errorLog{}
	c, err := kfake.NewCluster(clusterOpts(cfg, lns, log)...)
	if err != nil {
		lns.close()
		return nil, fmt.Errorf("kafka broker: start (data dir %q): %w", cfg.DataDir, err)
	}
	b := &Broker{cluster: c, addr: lns.addrs()[0], addrs: lns.addrs(), log: log}
	for _, t := range cfg.Topics {
		if err := b.CreateTopic(t); err != nil && !errors.Is(err, ErrTopicExists) {
			b.Close()
			return nil, fmt.Errorf("kafka broker: %w", err)
		}
	}
	return b, nil
}

func clusterOpts(cfg Config, lns *listeners, log *errorLog) []kfake.Opt {
	opts := []kfake.Opt{
		kfake.NumBrokers(len(lns.all)),
		kfake.ListenFn(lns.handOver),
		kfake.ClusterID("flinkgo-dev"),
		kfake.DefaultNumPartitions(1),
		kfake.WithLogger(log),
	}
	if cfg.AutoCreateTopics {
		opts = append(opts, kfake.AllowAutoTopicCreation())
	}
	if cfg.DataDir != "" {
		opts = append(opts, kfake.DataDir(cfg.DataDir))
		if cfg.SyncWrites {
			opts = append(opts, kfake.SyncWrites())
		}
	}
	return opts
}

// Addr returns the host:port clients should bootstrap from: the advertised
// address, which with a port 0 Listen carries the port actually chosen.
// Pass it as Config.Listen to restart a broker on the same port.
func (b *Broker) Addr() string { return b.addr }

// Addrs returns the advertised host:port of every node, the first being
// Addr.
func (b *Broker) Addrs() []string { return append([]string(nil), b.addrs...) }

// Cluster returns the underlying kfake cluster, for tests that need its
// fault injection or request control hooks. Do not use it after Close.
func (b *Broker) Cluster() *kfake.Cluster { return b.cluster }

// Close stops the broker: it stops listening, drops client connections and,
// with a DataDir, flushes all state to disk so that a Start on the same
// DataDir resumes with the same topics, records and committed offsets. It
// returns the errors the broker logged while running or flushing (for
// example a failed disk write). Close is idempotent.
func (b *Broker) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	b.cluster.Close()
	if err := b.log.err(); err != nil {
		return fmt.Errorf("kafka broker: %w", err)
	}
	return nil
}

// StopNode stops node i (0-based, of Config.Nodes) as a crash would: its
// listener closes and its partitions get leaders among the other nodes.
// The data stays (the cluster is one process).
func (b *Broker) StopNode(i int) error {
	return b.admin(func() error {
		if err := b.cluster.RemoveNode(int32(i)); err != nil {
			return fmt.Errorf("stop node %d: %w", i, err)
		}
		return nil
	})
}

// StartNode starts a stopped node i again on its address; partition
// leaders are spread anew over the nodes.
func (b *Broker) StartNode(i int) error {
	_, portText, err := net.SplitHostPort(b.addrs[i])
	if err != nil {
		return err
	}
	port, _ := strconv.Atoi(portText)
	return b.admin(func() error {
		if _, _, err := b.cluster.AddNode(int32(i), port); err != nil {
			return fmt.Errorf("start node %d: %w", i, err)
		}
		return nil
	})
}

// CreateTopic creates t. It returns an error wrapping ErrTopicExists if a
// topic of that name exists, whatever its partition count.
func (b *Broker) CreateTopic(t Topic) error {
	if err := t.Validate(); err != nil {
		return fmt.Errorf("create topic %q: %w", t.Name, err)
	}
	return b.admin(func() error {
		err := b.cluster.CreateTopic(t.Name, int32(t.Partitions), nil)
		if errors.Is(err, kerr.TopicAlreadyExists) {
			return fmt.Errorf("create topic %q: %w", t.Name, ErrTopicExists)
		}
		if err != nil {
			return fmt.Errorf("create topic %q: %w", t.Name, err)
		}
		return nil
	})
}

// Partitions returns the partition count of topic, or an error wrapping
// ErrUnknownTopic.
func (b *Broker) Partitions(topic string) (int, error) {
	var n int
	err := b.admin(func() error {
		n = len(b.cluster.PartitionInfos(topic))
		if n == 0 {
			return fmt.Errorf("topic %q: %w", topic, ErrUnknownTopic)
		}
		return nil
	})
	return n, err
}

// AddPartitions grows topic to total partitions, as
// kafka-topics --alter --partitions does; clients see the new partitions on
// their next metadata refresh. total equal to the current count is a no-op;
// fewer is an error (Kafka cannot shrink a topic).
func (b *Broker) AddPartitions(topic string, total int) error {
	current, err := b.Partitions(topic)
	if err != nil {
		return fmt.Errorf("add partitions: %w", err)
	}
	switch {
	case total == current:
		return nil
	case total < current:
		return fmt.Errorf("add partitions: topic %q has %d partitions, cannot shrink to %d", topic, current, total)
	}
	return b.admin(func() error { return b.createPartitions(topic, total) })
}

// createPartitions sends a CreatePartitions request over the wire: kfake has
// no in-process call for it.
func (b *Broker) createPartitions(topic string, total int) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.addr))
	if err != nil {
		return fmt.Errorf("add partitions to %q: %w", topic, err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()

	req := kmsg.NewPtrCreatePartitionsRequest()
	req.TimeoutMillis = int32(adminTimeout / time.Millisecond)
	rt := kmsg.NewCreatePartitionsRequestTopic()
	rt.Topic = topic
	rt.Count = int32(total)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("add partitions to %q: %w", topic, err)
	}
	for _, t := range resp.Topics {
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			return fmt.Errorf("add partitions to %q: %w", topic, err)
		}
	}
	return nil
}

// DeleteRecordsBefore deletes the records of one partition below offset, as
// retention or kafka-delete-records does: the partition's log start offset
// becomes offset, and a consumer asking for an older offset gets
// OFFSET_OUT_OF_RANGE. offset must lie between the current log start offset
// and the high watermark (inclusive); -1 means the high watermark.
func (b *Broker) DeleteRecordsBefore(topic string, partition int, offset int64) error {
	return b.admin(func() error {
		err := b.cluster.DeleteRecords(topic, int32(partition), offset)
		switch {
		case errors.Is(err, kerr.UnknownTopicOrPartition):
			return fmt.Errorf("delete records of %s/%d: %w", topic, partition, ErrUnknownTopic)
		case errors.Is(err, kerr.OffsetOutOfRange):
			return fmt.Errorf("delete records of %s/%d before %d: offset outside [log start, high watermark]: %w", topic, partition, offset, err)
		case err != nil:
			return fmt.Errorf("delete records of %s/%d: %w", topic, partition, err)
		}
		return nil
	})
}

// admin runs fn unless the broker is closed. kfake's in-process calls block
// forever once the cluster has stopped, so they must never race Close.
func (b *Broker) admin(fn func() error) error {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		return ErrClosed
	}
	return fn()
}
