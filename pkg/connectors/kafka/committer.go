package kafka

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
)

const (
	// closeCommitTimeout bounds the last commit attempt at Close.
	closeCommitTimeout = 2 * time.Second
	// commitLogEvery rate-limits the warnings of failing commits.
	commitLogEvery = 30 * time.Second
)

// committer commits the offsets of completed checkpoints to the consumer
// group on its own goroutine, latest first: a commit still waiting when a
// newer checkpoint completes is replaced by it. These commits only show
// progress to lag monitors (Flink's behaviour): a failure is counted and
// logged, never an error for the job.
type committer struct {
	cl       *cluster
	group    string
	log      zerolog.Logger
	failures *atomic.Int64

	mu          sync.Mutex
	latest      []position // offsets of the latest completed checkpoint
	latestID    int64
	committedID int64
	lastLog     time.Time
	unlogged    int

	wake   chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
}

func startCommitter(cl *cluster, group string, log zerolog.Logger, failures *atomic.Int64) *committer {
	c := &committer{cl: cl, group: group, log: log, failures: failures,
		wake: make(chan struct{}, 1), done: make(chan struct{})}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	go c.run()
	return c
}

// submit asks for offsets of checkpoint id to be committed.
func (c *committer) submit(id int64, offsets []position) {
	c.mu.Lock()
	c.latest, c.latestID = offsets, id
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *committer) run() {
	defer close(c.done)
	for {
		select {
		case <-c.wake:
			c.commitLatest(c.ctx, requestTimeout)
		case <-c.ctx.Done():
			// A last try, so that a stopped job leaves its final offsets.
			c.commitLatest(context.Background(), closeCommitTimeout)
			return
		}
	}
}

func (c *committer) commitLatest(parent context.Context, timeout time.Duration) {
	c.mu.Lock()
	offsets, id := c.latest, c.latestID
	todo := id > c.committedID
	c.mu.Unlock()
	if !todo {
		return
	}
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	if err := c.cl.commit(ctx, c.group, offsets); err != nil {
		if parent.Err() == nil { // not interrupted by close (which tries again)
			c.failed(id, err)
		}
		return
	}
	c.mu.Lock()
	c.committedID = max(c.committedID, id)
	c.mu.Unlock()
	c.log.Debug().Int64("checkpoint_id", id).Str("group", c.group).Int("partitions", len(offsets)).Msg("kafka offsets committed")
}

// failed counts a failed commit and logs it, at most every commitLogEvery.
func (c *committer) failed(id int64, err error) {
	c.failures.Add(1)
	c.mu.Lock()
	now := time.Now()
	if now.Sub(c.lastLog) < commitLogEvery {
		c.unlogged++
		c.mu.Unlock()
		return
	}
	suppressed := c.unlogged
	c.lastLog, c.unlogged = now, 0
	c.mu.Unlock()
	c.log.Warn().Err(err).Int64("checkpoint_id", id).Str("group", c.group).Int("suppressed", suppressed).
		Msg("kafka offset commit failed (offsets are safe in the checkpoint; only lag monitoring sees old offsets)")
}

// close stops the committer after a last commit attempt.
func (c *committer) close() {
	c.cancel()
	<-c.done
}
