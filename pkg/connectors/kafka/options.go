package kafka

import (
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// Defaults of the source's options (see the package documentation).
const (
	// DefaultPartitionDiscoveryInterval: Flink's KafkaSource checks every 5
	// minutes; one metadata request per subtask is cheap here, and a new
	// partition should not sit unread for long.
	DefaultPartitionDiscoveryInterval = 30 * time.Second
	// DefaultRetryTimeout is how long a partition keeps reconnecting to an
	// unreachable broker before the source fails the job over (Kafka's
	// default.api.timeout.ms).
	DefaultRetryTimeout = 60 * time.Second
)

// SourceOptions are the YAML options of the kafka source.
type SourceOptions struct {
	Brokers                    []api.Node    `yaml:"brokers,required"` // host:port strings
	Topic                      string        `yaml:"topic"`
	Topics                     []string      `yaml:"topics"`
	GroupID                    string        `yaml:"groupId"`
	StartingOffsets            any           `yaml:"startingOffsets"` // earliest, latest, committed, RFC 3339 or Unix ms
	AutoOffsetReset            string        `yaml:"autoOffsetReset"` // committed without a commit: earliest, latest, none
	Format                     string        `yaml:"format"`          // raw, json
	Bounded                    string        `yaml:"bounded"`         // latest
	PartitionDiscoveryInterval *api.Duration `yaml:"partitionDiscoveryInterval"`
	OnOffsetOutOfRange         string        `yaml:"onOffsetOutOfRange"` // fail, earliest, latest
	OnDecodeError              string        `yaml:"onDecodeError"`      // fail, skip
	OnMissingValue             string        `yaml:"onMissingValue"`     // format json: skip, fail
	RetryTimeout               *api.Duration `yaml:"retryTimeout"`
	IsolationLevel             string        `yaml:"isolationLevel"` // read_uncommitted (default), read_committed
}

// startMode says where a partition without restored state starts.
type startMode uint8

const (
	startEarliest startMode = iota + 1
	startLatest
	startCommitted
	startTimestamp
	startNone // autoOffsetReset none: fail
)

func (m startMode) String() string {
	switch m {
	case startEarliest:
		return "earliest"
	case startLatest:
		return "latest"
	case startCommitted:
		return "committed"
	case startTimestamp:
		return "timestamp"
	case startNone:
		return "none"
	}
	return "unknown"
}

// sourceConfig is the checked form of SourceOptions.
type sourceConfig struct {
	brokers      []string
	topics       []string
	group        string
	start        startMode
	startTime    time.Time // startTimestamp
	reset        startMode // startCommitted without a commit: earliest, latest or none
	json         bool
	bounded      bool
	discovery    time.Duration // 0: off
	outOfRange   startMode     // startNone (fail), startEarliest or startLatest
	skipInvalid  bool
	failMissing  bool // format json: a record without value fails the job
	retryTimeout time.Duration
	// readCommitted: franz-go's consumer at read_committed (committedsource.go)
	readCommitted bool
}

func configureSource(c *runtime.ConfigContext) *runtime.Plan {
	var o SourceOptions
	c.Decode(&o)
	cfg := sourceConfig{group: o.GroupID, brokers: checkBrokers(c, o.Brokers)}
	cfg.topics = checkTopics(c, o.Topic, o.Topics)
	cfg.start, cfg.startTime = parseStartingOffsets(c, o.StartingOffsets)
	if cfg.start == startCommitted && cfg.group == "" {
		c.Errorf("startingOffsets", "committed offsets are read from a consumer group; set groupId")
	}
	cfg.reset = startEarliest
	if o.AutoOffsetReset != "" {
		cfg.reset = choice(c, "autoOffsetReset", o.AutoOffsetReset, map[string]startMode{
			"earliest": startEarliest, "latest": startLatest, "none": startNone})
		if cfg.start != startCommitted {
			c.Errorf("autoOffsetReset", "applies only with startingOffsets: committed")
		}
	}
	cfg.json = choice(c, "format", or(o.Format, "raw"), map[string]bool{"raw": false, "json": true})
	switch o.Bounded {
	case "":
	case "latest":
		cfg.bounded = true
	default:
		c.Errorf("bounded", "must be latest (stop at the end offsets seen at start), got %q", o.Bounded)
	}
	cfg.discovery = DefaultPartitionDiscoveryInterval
	if o.PartitionDiscoveryInterval != nil {
		cfg.discovery = o.PartitionDiscoveryInterval.D()
	}
	if cfg.bounded {
		cfg.discovery = 0 // as in Flink: a bounded source reads the partitions it started with
	}
	cfg.outOfRange = choice(c, "onOffsetOutOfRange", or(o.OnOffsetOutOfRange, "fail"), map[string]startMode{
		"fail": startNone, "earliest": startEarliest, "latest": startLatest})
	cfg.skipInvalid = choice(c, "onDecodeError", or(o.OnDecodeError, "fail"), map[string]bool{"fail": false, "skip": true})
	if o.OnDecodeError != "" && !cfg.json {
		c.Errorf("onDecodeError", "applies only with format: json (format raw never fails to decode)")
	}
	cfg.failMissing = choice(c, "onMissingValue", or(o.OnMissingValue, "skip"), map[string]bool{"skip": false, "fail": true})
	if o.OnMissingValue != "" && !cfg.json {
		c.Errorf("onMissingValue", "applies only with format: json (format raw emits a record without value as one with an empty value)")
	}
	cfg.retryTimeout = DefaultRetryTimeout
	if o.RetryTimeout != nil {
		cfg.retryTimeout = o.RetryTimeout.D()
	}
	cfg.readCommitted = choice(c, "isolationLevel", or(o.IsolationLevel, "read_uncommitted"), map[string]bool{
		"read_uncommitted": false, "read_committed": true})
	return &runtime.Plan{Bounded: cfg.bounded, SkipBadTimestamps: cfg.skipInvalid, NewSource: func() runtime.Source { return newSource(cfg) }}
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// choice maps an enumerated option to its value, reporting an unknown one.
func choice[T any](c *runtime.ConfigContext, field, v string, values map[string]T) T {
	if x, ok := values[v]; ok {
		return x
	}
	c.Errorf(field, "must be one of %s, got %q", strings.Join(api.SortedKeys(values), ", "), v)
	var zero T
	return zero
}

// checkBrokers reads the host:port list. The YAML parser reads an unquoted
// host:port inside a flow mapping ({type: kafka, brokers: [localhost:9092]},
// the form of the design's examples) as a one-entry mapping; it is taken
// back as the host:port it was written as.
func checkBrokers(c *runtime.ConfigContext, nodes []api.Node) []string {
	if c.Has("brokers") && len(nodes) == 0 && !c.Reported("brokers") {
		c.Errorf("brokers", "needs at least one host:port")
	}
	brokers := make([]string, 0, len(nodes))
	for i, n := range nodes {
		b, ok := hostPort(n.Value())
		if _, port, err := net.SplitHostPort(b); !ok || err != nil || port == "" {
			c.Errorf(fmt.Sprintf("brokers[%d]", i), "%s is not host:port (e.g. localhost:9092)", shown(n.Value()))
		}
		brokers = append(brokers, b)
	}
	return brokers
}

// shown is a YAML value as its JSON text, a string as it is.
func shown(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func hostPort(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case map[string]any:
		for host, port := range x {
			if p, ok := port.(int64); ok && len(x) == 1 {
				return host + ":" + strconv.FormatInt(p, 10), true
			}
		}
	}
	return "", false
}

func checkTopics(c *runtime.ConfigContext, topic string, topics []string) []string {
	switch {
	case topic != "" && len(topics) > 0:
		c.Errorf("topics", "set either topic or topics, not both")
		return nil
	case topic != "":
		topics = []string{topic}
	case len(topics) == 0:
		c.Errorf("", "missing topic: set topic (or topics, a list)")
		return nil
	}
	seen := map[string]bool{}
	for i, t := range topics {
		field := "topic"
		if len(topics) > 1 || c.Has("topics") {
			field = fmt.Sprintf("topics[%d]", i)
		}
		switch {
		case t == "":
			c.Errorf(field, "empty topic name")
		case seen[t]:
			c.Errorf(field, "topic %q is listed twice", t)
		}
		seen[t] = true
	}
	return topics
}

// parseStartingOffsets reads earliest (the default, as in Flink's
// KafkaSource), latest, committed, an RFC 3339 time or Unix milliseconds.
func parseStartingOffsets(c *runtime.ConfigContext, v any) (startMode, time.Time) {
	switch x := v.(type) {
	case nil:
		return startEarliest, time.Time{}
	case int64:
		if x < 0 {
			c.Errorf("startingOffsets", "timestamp %d is negative", x)
		}
		return startTimestamp, time.UnixMilli(x)
	case string:
		switch x {
		case "earliest":
			return startEarliest, time.Time{}
		case "latest":
			return startLatest, time.Time{}
		case "committed":
			return startCommitted, time.Time{}
		}
		if ms, err := strconv.ParseInt(x, 10, 64); err == nil && ms >= 0 {
			return startTimestamp, time.UnixMilli(ms)
		}
		if t, err := time.Parse(time.RFC3339Nano, x); err == nil {
			return startTimestamp, t
		}
	}
	c.Errorf("startingOffsets", "must be earliest, latest, committed, a time (RFC 3339, e.g. 2024-05-01T12:00:00Z) or Unix milliseconds, got %v", v)
	return startEarliest, time.Time{}
}
