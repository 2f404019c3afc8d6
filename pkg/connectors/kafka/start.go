package kafka

import (
	"context"
	"fmt"
)

// restored returns the positions of the partitions this subtask owns from
// the restored state (nil when there is none) and the topics it covers.
func (s *source) restored() ([]position, map[string]bool, error) {
	items := s.ctx.OperatorState().Get(partitionsList)
	if items == nil {
		return nil, nil, nil
	}
	subscribed := map[string]bool{}
	for _, t := range s.cfg.topics {
		subscribed[t] = true
	}
	known, dropped, seen := map[string]bool{}, map[string]bool{}, map[topicPartition]bool{}
	mine := []position{}
	for _, it := range items {
		p, err := decodePosition(it)
		if err != nil {
			return nil, nil, fmt.Errorf("restore kafka source %q: %w", s.ctx.UID(), err)
		}
		if !subscribed[p.tp.Topic] {
			dropped[p.tp.Topic] = true
			continue
		}
		known[p.tp.Topic] = true
		if !s.cfg.bounded {
			p.stop = noStop // state of a bounded run restored by an unbounded job
		}
		if !seen[p.tp] && owner(p.tp, s.ctx.Parallelism()) == s.ctx.Subtask() {
			mine = append(mine, p)
		}
		seen[p.tp] = true
	}
	for t := range dropped {
		s.ctx.Log().Warn().Str("topic", t).Msg("restored kafka offsets of a topic no longer subscribed are dropped")
	}
	return mine, known, nil
}

// initialPositions completes the restored positions with the owned
// partitions that have none: from startingOffsets when their topic is new
// to the state, from the earliest offset when the partition appeared after
// the snapshot (as partitions discovered while running). It also returns
// every owned partition (for discovery).
func (s *source) initialPositions(restored []position, known map[string]bool) (positions []position, all []topicPartition, err error) {
	err = s.openRetry(func(ctx context.Context) (err error) {
		positions, all, err = s.tryInitialPositions(ctx, restored, known)
		return err
	})
	return positions, all, err
}

// tryInitialPositions is one attempt of initialPositions.
func (s *source) tryInitialPositions(ctx context.Context, restored []position, known map[string]bool) ([]position, []topicPartition, error) {
	tps, err := s.cl.partitions(ctx, s.cfg.topics)
	if err != nil {
		return nil, nil, err
	}
	have := map[topicPartition]bool{}
	var all []topicPartition
	for _, p := range restored {
		have[p.tp] = true
		all = append(all, p.tp)
	}
	var fresh, added []topicPartition
	for _, tp := range tps {
		if have[tp] || owner(tp, s.ctx.Parallelism()) != s.ctx.Subtask() {
			continue
		}
		all = append(all, tp)
		if known[tp.Topic] {
			added = append(added, tp)
		} else {
			fresh = append(fresh, tp)
		}
	}
	positions := restored
	for _, set := range []struct {
		tps  []topicPartition
		mode startMode
	}{{fresh, s.cfg.start}, {added, startEarliest}} {
		ps, err := s.resolve(ctx, set.tps, set.mode)
		if err != nil {
			return nil, nil, err
		}
		positions = append(positions, ps...)
	}
	if s.cfg.bounded {
		if err := s.setStops(ctx, positions); err != nil {
			return nil, nil, err
		}
	}
	return positions, all, nil
}

// resolve finds the start offsets of tps under mode.
func (s *source) resolve(ctx context.Context, tps []topicPartition, mode startMode) ([]position, error) {
	if len(tps) == 0 {
		return nil, nil
	}
	ranges, err := s.cl.ranges(ctx, tps)
	if err != nil {
		return nil, err
	}
	var committed, atTime map[topicPartition]int64
	switch mode {
	case startCommitted:
		committed, err = s.cl.committed(ctx, s.cfg.group, tps)
	case startTimestamp:
		atTime, err = s.cl.offsetsForTime(ctx, tps, s.cfg.startTime)
	}
	if err != nil {
		return nil, err
	}
	out := make([]position, len(tps))
	for i, tp := range tps {
		r := ranges[tp]
		p := position{tp: tp, stop: noStop}
		switch mode {
		case startEarliest:
			p.next = r.first
		case startLatest:
			p.next = r.last
		case startTimestamp:
			// no record at or after the time: the end, as Flink's timestamp initializer
			if p.next = atTime[tp]; p.next < 0 {
				p.next = r.last
			}
		case startCommitted:
			c, ok := committed[tp]
			switch {
			case ok && c >= r.first && c <= r.last:
				p.next = c
			case s.cfg.reset == startLatest:
				p.next = r.last
			case s.cfg.reset == startEarliest:
				p.next = r.first
			case ok:
				return nil, permanent(fmt.Errorf("%s: offset %d committed by group %q is out of range (log start offset %d, end offset %d) and autoOffsetReset is none", tp, c, s.cfg.group, r.first, r.last))
			default:
				return nil, permanent(fmt.Errorf("%s: group %q has no committed offset and autoOffsetReset is none", tp, s.cfg.group))
			}
		}
		out[i] = p
	}
	return out, nil
}

// setStops gives bounded positions without a stop offset the current end.
func (s *source) setStops(ctx context.Context, positions []position) error {
	var need []topicPartition
	for _, p := range positions {
		if p.stop == noStop {
			need = append(need, p.tp)
		}
	}
	if len(need) == 0 {
		return nil
	}
	ranges, err := s.cl.ranges(ctx, need)
	if err != nil {
		return err
	}
	for i := range positions {
		if positions[i].stop == noStop {
			positions[i].stop = ranges[positions[i].tp].last
		}
	}
	return nil
}
