package nats

// ledger records, for one subtask of an at-least-once queue source, which
// messages each checkpoint covers. A message emitted before barrier n is
// covered by checkpoint n; it may be acknowledged once checkpoint n, or any
// later one, has completed (an intermediate savepoint never completes for
// this purpose: its messages wait for the next completed checkpoint). The
// ledger does no I/O: it hands back the reply subjects to acknowledge or
// to return to the queue, and the caller sends them.
//
// Messages are emitted in the order they were delivered, so the first
// message of a list is its oldest; each list remembers the keepalive
// generation of its first message (see acker) so that only lists holding
// messages old enough are kept alive.
type ledger struct {
	emitted replies // emitted since the last snapshot
	covered []cover // snapshotted, waiting for completion; ascending ids
	n       int     // messages held in all
}

// replies is a list of reply subjects with the delivery generation of
// its oldest.
type replies struct {
	list []string
	gen  int64
}

func (r *replies) add(reply string, gen int64) {
	if len(r.list) == 0 {
		r.gen = gen
	}
	r.list = append(r.list, reply)
}

// cover is the messages checkpoint id covers.
type cover struct {
	id int64
	replies
}

// emit records an emitted message by its ack reply subject and the
// generation it was delivered in.
func (l *ledger) emit(reply string, gen int64) {
	l.emitted.add(reply, gen)
	l.n++
}

// snapshot closes the messages emitted so far under checkpoint id.
func (l *ledger) snapshot(id int64) {
	if len(l.emitted.list) == 0 {
		return
	}
	l.covered = append(l.covered, cover{id: id, replies: l.emitted})
	l.emitted = replies{list: make([]string, 0, len(l.emitted.list))}
}

// complete returns (and forgets) the messages of every checkpoint up to
// and including id, to be acknowledged, and the generation of the oldest.
func (l *ledger) complete(id int64) replies {
	k := 0
	for k < len(l.covered) && l.covered[k].id <= id {
		k++
	}
	return l.take(0, k)
}

// abort returns (and forgets) the messages of checkpoint id: they are to
// be returned to the queue.
func (l *ledger) abort(id int64) []string {
	for k, c := range l.covered {
		if c.id == id {
			return l.take(k, k+1).list
		}
	}
	return nil
}

// take removes covers [from, to) and returns their messages.
func (l *ledger) take(from, to int) replies {
	if from == to {
		return replies{}
	}
	out := l.covered[from].replies
	for _, c := range l.covered[from+1 : to] {
		out.list = append(out.list, c.list...)
	}
	l.covered = append(l.covered[:from], l.covered[to:]...)
	l.n -= len(out.list)
	return out
}

// drain returns (and forgets) every message held: on close, to be
// returned to the queue.
func (l *ledger) drain() []string {
	out := l.take(0, len(l.covered)).list
	out = append(out, l.emitted.list...)
	l.n -= len(l.emitted.list)
	l.emitted = replies{}
	return out
}

// appendOld appends to dst the messages of every list whose oldest
// message was delivered in generation gen or before (keepalives).
func (l *ledger) appendOld(dst []string, gen int64) []string {
	for _, c := range l.covered {
		if c.gen <= gen {
			dst = append(dst, c.list...)
		}
	}
	if len(l.emitted.list) > 0 && l.emitted.gen <= gen {
		dst = append(dst, l.emitted.list...)
	}
	return dst
}

// len is the number of messages held.
func (l *ledger) len() int { return l.n }
