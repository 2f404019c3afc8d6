package kafka

import (
	"fmt"
	"regexp"
	"time"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// deliveryGuarantee is the sink's deliveryGuarantee option (Flink's
// DeliveryGuarantee).
type deliveryGuarantee uint8

const (
	atLeastOnce deliveryGuarantee = iota + 1 // flush at every barrier (default)
	exactlyOnce                              // Kafka transactions, committed on checkpoint completion
	noGuarantee                              // no flush at barriers: records may be lost on failure
)

// Defaults of the exactly-once sink.
const (
	// DefaultTransactionTimeout is the producers' transaction.timeout.ms:
	// the most a transaction may stay open before the broker aborts it.
	// Kafka's own default (1 min) is shorter than Flink's default
	// checkpoint timeout; 15 min is the brokers' default maximum.
	DefaultTransactionTimeout = 15 * time.Minute
	// DefaultTransactionMaxTimeout is the brokers' transaction.max.timeout.ms
	// as Kafka ships it; transactionTimeout must not exceed it.
	DefaultTransactionMaxTimeout = 15 * time.Minute
	// minRetained: recovering from a transaction the broker aborted
	// restores the checkpoint before the one it belonged to.
	minRetained = 2
)

// txnSettings are the checked exactly-once options.
type txnSettings struct {
	prefix   string // "" : derived from the job id and uid at Open
	timeout  time.Duration
	poolSize int
}

var prefixChars = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// configureDelivery reads deliveryGuarantee and the transaction options
// (which apply only to exactly-once).
func configureDelivery(c *runtime.ConfigContext, o *SinkOptions) (deliveryGuarantee, txnSettings) {
	g := choice(c, "deliveryGuarantee", or(o.DeliveryGuarantee, "at-least-once"), map[string]deliveryGuarantee{
		"at-least-once": atLeastOnce, "exactly-once": exactlyOnce, "none": noGuarantee})
	if g != exactlyOnce {
		for _, f := range []string{"transactionalIdPrefix", "transactionTimeout", "transactionMaxTimeout", "transactionalIdPoolSize"} {
			if c.Has(f) {
				c.Errorf(f, "applies only with deliveryGuarantee: exactly-once")
			}
		}
		return g, txnSettings{}
	}
	set := txnSettings{prefix: o.TransactionalIDPrefix, timeout: DefaultTransactionTimeout,
		poolSize: defaultPoolSize(c.Checkpointing)}
	if c.Has("transactionalIdPrefix") && !prefixChars.MatchString(set.prefix) {
		c.Errorf("transactionalIdPrefix", "must be letters, digits, '.', '_' or '-', got %q", set.prefix)
	}
	if o.TransactionTimeout != nil {
		set.timeout = o.TransactionTimeout.D()
	}
	brokerMax := DefaultTransactionMaxTimeout
	if o.TransactionMaxTimeout != nil {
		brokerMax = o.TransactionMaxTimeout.D()
	}
	if field, msg := checkTransactionTimeout(set.timeout, brokerMax, c.Checkpointing); msg != "" {
		c.Errorf(field, "%s", msg)
	}
	if c.Has("transactionalIdPoolSize") {
		if set.poolSize = o.TransactionalIDPoolSize; set.poolSize < 2 || set.poolSize > maxPoolSize {
			c.Errorf("transactionalIdPoolSize", "must be 2 to %d (one id receives records while another waits for its checkpoint), got %d", maxPoolSize, set.poolSize)
		}
	}
	if c.Checkpointing.Enabled() && c.Checkpointing.Mode != api.ExactlyOnce {
		c.Errorf("deliveryGuarantee", "exactly-once needs checkpointing.mode: %s (with %s, records after a barrier can enter the transaction of the checkpoint before it and be written twice after a restore)", api.ExactlyOnce, c.Checkpointing.Mode)
	}
	return g, set
}

// checkTransactionTimeout is the submit-time check of the transaction
// timeout against the checkpointing settings and the brokers' maximum. A
// transaction opens with the first record after a barrier and commits when
// the next checkpoint completes: up to an interval plus a checkpoint's
// duration (at most its timeout) later. A broker aborts a transaction open
// longer than transactionTimeout; it refuses a transactionTimeout above
// its transaction.max.timeout.ms. It returns the option at fault and the
// message, or "" when the combination is consistent.
func checkTransactionTimeout(timeout, brokerMax time.Duration, cp api.CheckpointConfig) (field, msg string) {
	need := cp.Interval + cp.Timeout
	switch {
	case timeout <= 0:
		return "transactionTimeout", "must be positive"
	case timeout > brokerMax:
		return "transactionTimeout", fmt.Sprintf("%s exceeds transactionMaxTimeout %s (the brokers' transaction.max.timeout.ms, which refuses longer ones); lower transactionTimeout, or raise both if the brokers allow it", timeout, brokerMax)
	case timeout <= need:
		return "transactionTimeout", fmt.Sprintf("%s must exceed checkpointing.interval (%s) + checkpointing.timeout (%s) = %s: a transaction stays open from the first record after a barrier until the next checkpoint completes, and the broker aborts it after transactionTimeout; raise transactionTimeout (at most transactionMaxTimeout %s) or lower checkpointing.timeout",
			timeout, cp.Interval, cp.Timeout, need, brokerMax)
	}
	return "", ""
}

// defaultPoolSize: a subtask needs one id for the open transaction and one
// per pre-committed transaction still waiting: checkpoints in flight
// (maxConcurrent), aborted ones whose transactions wait for the next
// completed checkpoint (up to tolerableFailures before the job fails over),
// and a savepoint's.
func defaultPoolSize(cp api.CheckpointConfig) int {
	return min(max(cp.MaxConcurrent, 1)+cp.TolerableFailures+2, 32)
}

// defaultPrefix derives the transactional id prefix from the job id and
// the sink's uid: unique per job and sink, stable across the job's
// restarts and recoveries (a job restored with -s is a new job: it fences
// the pools named in the snapshot, whatever their prefix).
func defaultPrefix(jobID, uid string) string { return "flinkgo-" + jobID + "-" + uid }
