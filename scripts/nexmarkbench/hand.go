package main

import (
	"bytes"
	"strconv"

	"github.com/flinkgo/flinkgo/pkg/connectors/nexmark"
)

// The hand-written programs compute q5 and q7 from the same generator and
// the same JSON records the nexmark source emits, the way a Go programmer
// would with no framework: one loop over the events in order, a
// hand-rolled scanner for the three members they read, and only the state
// the query needs (counts per pane and auction; the highest bids of the
// current window). Both count their results, which must equal flinkgo's.

// field returns the raw value of member name in a flat JSON record.
func field(b []byte, name string) []byte {
	i := bytes.Index(b, []byte(`"`+name+`":`))
	if i < 0 {
		return nil
	}
	v := b[i+len(name)+3:]
	if j := bytes.IndexAny(v, ",}"); j >= 0 {
		return v[:j]
	}
	return v
}

func intField(b []byte, name string) int64 {
	n, _ := strconv.ParseInt(string(field(b, name)), 10, 64)
	return n
}

// events calls fn with the JSON of events 0..n-1 of g.
func events(g *nexmark.Generator, n int64, fn func(rec []byte)) {
	var e nexmark.Event
	buf := make([]byte, 0, g.MaxLen())
	for i := int64(0); i < n; i++ {
		g.Next(i, &e)
		buf = nexmark.AppendJSON(buf[:0], &e)
		fn(buf)
	}
}

func floorTo(ts, step int64) int64 {
	r := ts % step
	if r < 0 {
		r += step
	}
	return ts - r
}

// handQ5: per sliding window of 10 s every 2 s, the auctions with the most
// bids. Counts are kept per 2 s pane; when the event time (in order) passes
// a window's end, its panes are summed and the ties at the top emitted.
func handQ5(g *nexmark.Generator, n int64) (results int64) {
	const size, slide = 10_000, 2_000
	panes := map[int64]map[int64]int64{}
	next := int64(-1 << 62) // the next window end to fire
	var out []byte
	fire := func(end int64) {
		sum := map[int64]int64{}
		for p := end - size; p < end; p += slide {
			for a, c := range panes[p] {
				sum[a] += c
			}
		}
		delete(panes, end-size)
		var top int64
		for _, c := range sum {
			top = max(top, c)
		}
		for a, c := range sum {
			if c == top {
				out = strconv.AppendInt(append(out[:0], `{"auction":`...), a, 10)
				out = append(strconv.AppendInt(append(out, `,"num":`...), c, 10), '}')
				results++
			}
		}
	}
	events(g, n, func(rec []byte) {
		if rec[len(`{"event_type":`)] != '2' {
			return
		}
		ts, auction := intField(rec, "dateTime"), intField(rec, "auction")
		p := floorTo(ts, slide)
		if next == -1<<62 {
			next = p + slide
		}
		for next <= ts {
			fire(next)
			next += slide
		}
		c := panes[p]
		if c == nil {
			c = map[int64]int64{}
			panes[p] = c
		}
		c[auction]++
	})
	for len(panes) > 0 {
		fire(next)
		next += slide
	}
	return results
}

// handQ7: per tumbling window of 10 s, the bids at the highest price,
// including those at the window's end (BETWEEN is inclusive). In event
// time order a window is complete when a later one starts.
func handQ7(g *nexmark.Generator, n int64) (results int64) {
	const size = 10_000
	var (
		win              = int64(-1 << 62)
		top              = int64(-1)
		best             [][]byte
		prevEnd, prevTop = int64(-1 << 62), int64(-1)
		out              []byte
	)
	emit := func(rec []byte) {
		out = append(out[:0], `{"auction":`...)
		out = append(out, field(rec, "auction")...)
		out = append(append(out, `,"bidder":`...), field(rec, "bidder")...)
		out = append(append(out, `,"dateTime":`...), field(rec, "dateTime")...)
		out = append(append(out, `,"extra":`...), field(rec, "extra")...)
		out = append(append(append(out, `,"price":`...), field(rec, "price")...), '}')
		results++
	}
	finish := func() {
		for _, b := range best {
			emit(b)
		}
		prevEnd, prevTop = win+size, top
	}
	events(g, n, func(rec []byte) {
		if rec[len(`{"event_type":`)] != '2' {
			return
		}
		ts, price := intField(rec, "dateTime"), intField(rec, "price")
		if w := floorTo(ts, size); w != win {
			if win != -1<<62 {
				finish()
			}
			win, top, best = w, -1, best[:0]
		}
		if ts == prevEnd && price == prevTop {
			emit(rec) // the previous window's highest, at its end
		}
		switch {
		case price > top:
			top, best = price, append(best[:0], append([]byte(nil), rec...))
		case price == top:
			best = append(best, append([]byte(nil), rec...))
		}
	})
	if win != -1<<62 {
		finish()
	}
	return results
}
