package kafka

import (
	"context"
	"time"
)

// discover looks for new partitions of the subscribed topics every
// partitionDiscoveryInterval, on its own goroutine (a metadata request must
// never hold up Poll and the barriers behind it). It hands the partitions
// this subtask owns, positioned at their earliest offset, to Poll. A failed
// lookup is logged and retried at the next interval.
func (s *source) discover(known []topicPartition) {
	defer s.wg.Done()
	have := make(map[topicPartition]bool, len(known))
	for _, tp := range known {
		have[tp] = true
	}
	ticker := time.NewTicker(s.cfg.discovery)
	defer ticker.Stop()
	failing := false
	for {
		select {
		case <-ticker.C:
		case <-s.run.Done():
			return
		}
		ps, err := s.newPartitions(have)
		if err != nil {
			if !failing && s.run.Err() == nil {
				s.ctx.Log().Warn().Err(err).Msg("kafka partition discovery failed; retrying at the next interval")
			}
			failing = true
			continue
		}
		failing = false
		if len(ps) == 0 {
			continue
		}
		select {
		case s.discovered <- ps:
			for _, p := range ps {
				have[p.tp] = true
			}
		case <-s.run.Done():
			return
		}
	}
}

// newPartitions returns the owned partitions not in have, at their
// earliest offsets.
func (s *source) newPartitions(have map[topicPartition]bool) ([]position, error) {
	ctx, cancel := context.WithTimeout(s.run, requestTimeout)
	defer cancel()
	tps, err := s.cl.partitions(ctx, s.cfg.topics)
	if err != nil {
		return nil, err
	}
	var fresh []topicPartition
	for _, tp := range tps {
		if !have[tp] && owner(tp, s.ctx.Parallelism()) == s.ctx.Subtask() {
			fresh = append(fresh, tp)
		}
	}
	return s.resolve(ctx, fresh, startEarliest)
}
