package kafka

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// permanentError is an Open error that retrying cannot fix: a topic that
// does not exist, a partition without committed offset under
// autoOffsetReset none. It is also runtime.ErrRestartsSuppressed: the job
// fails at once instead of restarting on it forever, whichever of the
// source and the two sinks found it.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() []error {
	return []error{e.err, runtime.ErrRestartsSuppressed}
}

func permanent(err error) error { return &permanentError{err} }

// topicMissing is the one error for a topic the brokers do not have, found
// by the source, the at-least-once sink or the exactly-once sink at open.
func topicMissing(topic string, brokers []string) error {
	return permanent(fmt.Errorf("topic %q does not exist on brokers %v", topic, brokers))
}

// problemOpen keys the source's problem while Open cannot reach the brokers.
const problemOpen = "open"

// openRetry runs op (Open's metadata and offset requests) until it
// succeeds, fails for good (permanentError), the attempt is canceled, or
// retryTimeout has passed since the first failure. A broker that is down
// when a restart opens the source (connection refused) is waited for as
// long as the fetchers wait for one that goes down while running: without
// it each restart failed at once and a 60 s outage used up the restart
// strategy for good. While it fails the source shows the problem.
func (s *source) openRetry(op func(ctx context.Context) error) error {
	defer s.ctx.Metrics().ClearProblem(problemOpen)
	var since time.Time
	backoff := minBackoff
	for {
		ctx, cancel := context.WithTimeout(s.run, openTimeout)
		err := op(ctx)
		cancel()
		var perm *permanentError
		switch {
		case err == nil:
			if !since.IsZero() {
				s.ctx.Log().Info().Dur("after", time.Since(since).Round(time.Millisecond)).Msg("kafka brokers reachable again; source opened")
			}
			return nil
		case errors.As(err, &perm):
			// A configuration error (a topic that does not exist): the
			// job fails at once instead of restarting on it forever.
			return err
		case s.run.Err() != nil:
			return err
		}
		now := time.Now()
		if since.IsZero() {
			since = now
			s.ctx.Log().Warn().Err(err).Dur("retry_timeout", s.cfg.retryTimeout).Msg("kafka source cannot reach the brokers to open; retrying")
		} else if now.Sub(since) > s.cfg.retryTimeout {
			return fmt.Errorf("%w (retried for %s: retryTimeout)", err, now.Sub(since).Round(time.Millisecond))
		}
		s.ctx.Metrics().SetProblem(problemOpen, fmt.Sprintf("cannot reach brokers %v to open since %s: %v (retrying for up to %s)",
			s.cfg.brokers, since.Format(time.RFC3339), err, s.cfg.retryTimeout))
		select {
		case <-time.After(backoff):
		case <-s.run.Done():
			return err
		}
		backoff = min(2*backoff, maxBackoff)
		// kafka-go's transport keeps answering with its failed dial until
		// its metadata refresh (up to partitionDiscoveryInterval): start
		// afresh.
		s.cl.close()
		s.cl = newCluster(s.cfg.brokers, s.cfg.discovery)
		s.shared.cl = s.cl
	}
}

// watchDone cancels the source's context when the attempt is canceled, so
// a retrying Open and the fetchers stop; it ends with the source.
func (s *source) watchDone(done <-chan struct{}) {
	if done == nil {
		return
	}
	go func() {
		select {
		case <-done:
			s.cancel()
		case <-s.run.Done():
		}
	}()
}
