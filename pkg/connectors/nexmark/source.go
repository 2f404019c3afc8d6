package nexmark

import (
	"strconv"
	"time"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/state"
)

// Options of the nexmark source; unset workload options take
// DefaultConfig's values.
type Options struct {
	Events *int64  `yaml:"events"` // total events; omit for unbounded
	Rate   float64 `yaml:"rate"`   // events/s for the whole source; 0 = as fast as possible

	EventRate         *int64  `yaml:"eventRate"`
	StartTime         *string `yaml:"startTime"`
	PersonProportion  *int64  `yaml:"personProportion"`
	AuctionProportion *int64  `yaml:"auctionProportion"`
	BidProportion     *int64  `yaml:"bidProportion"`
	HotAuctionRatio   *int64  `yaml:"hotAuctionRatio"`
	HotBiddersRatio   *int64  `yaml:"hotBiddersRatio"`
	HotSellersRatio   *int64  `yaml:"hotSellersRatio"`
	ActivePeople      *int64  `yaml:"numActivePeople"`
	InFlightAuctions  *int64  `yaml:"numInFlightAuctions"`
	AvgPersonSize     *int64  `yaml:"avgPersonByteSize"`
	AvgAuctionSize    *int64  `yaml:"avgAuctionByteSize"`
	AvgBidSize        *int64  `yaml:"avgBidByteSize"`
	Seed              *int64  `yaml:"seed"`
}

// Definitions returns the nexmark source type.
func Definitions() []runtime.Definition {
	return []runtime.Definition{{Type: "nexmark", Kind: api.KindSource,
		Doc: `Nexmark generator: person, auction and bid events as flat JSON ({"event_type": 2, …}: 0 person, 1 auction, 2 bid) timestamped with dateTime; ` +
			`events (omit: unbounded), rate, eventRate, seed and Nexmark's workload options; its position is checkpointed`,
		Configure: configure}}
}

// config returns the workload o sets over the defaults.
func (o Options) config() Config {
	c := DefaultConfig()
	set := func(dst *int64, v *int64) {
		if v != nil {
			*dst = *v
		}
	}
	set(&c.EventRate, o.EventRate)
	if o.StartTime != nil {
		c.StartTime = *o.StartTime
	}
	set(&c.Person, o.PersonProportion)
	set(&c.Auction, o.AuctionProportion)
	set(&c.Bid, o.BidProportion)
	set(&c.HotAuctions, o.HotAuctionRatio)
	set(&c.HotBidders, o.HotBiddersRatio)
	set(&c.HotSellers, o.HotSellersRatio)
	set(&c.ActivePeople, o.ActivePeople)
	set(&c.InFlightAuctions, o.InFlightAuctions)
	set(&c.AvgPersonSize, o.AvgPersonSize)
	set(&c.AvgAuctionSize, o.AvgAuctionSize)
	set(&c.AvgBidSize, o.AvgBidSize)
	set(&c.Seed, o.Seed)
	return c
}

func configure(c *runtime.ConfigContext) *runtime.Plan {
	var o Options
	c.Decode(&o)
	cfg := o.config()
	ok := true
	for _, p := range cfg.Problems() {
		c.Errorf(p.Field, "%s", p.Msg)
		ok = false
	}
	if o.Events != nil && *o.Events < 0 {
		c.Errorf("events", "must be 0 or more, got %d", *o.Events)
		ok = false
	}
	if o.Rate < 0 {
		c.Errorf("rate", "must be 0 (unlimited) or more, got %g", o.Rate)
		ok = false
	}
	if !ok {
		return nil
	}
	g, _ := New(cfg)
	events := int64(-1)
	if o.Events != nil {
		events = *o.Events
	}
	return &runtime.Plan{Bounded: events >= 0, NewSource: func() runtime.Source {
		return &source{g: g, events: events, rate: o.Rate}
	}}
}

// The timeline is cut into splits: split s of S holds events s, s+S, s+2S…,
// so each split's event times never decrease. S is the parallelism of the
// first run and never changes: a restore at another parallelism deals the
// splits out again.
type split struct {
	id, of int64
	next   int64 // next event number
}

const (
	positionsList   = "positions"
	positionVersion = 1
)

func (s split) encode() []byte {
	e := state.NewEncoder(positionVersion)
	e.Varint(s.id)
	e.Varint(s.of)
	e.Varint(s.next)
	return e.Encoded()
}

func decodeSplit(b []byte) (split, error) {
	d := state.NewDecoder("nexmark split", b, positionVersion)
	s := split{id: d.Varint(), of: d.Varint(), next: d.Varint()}
	if d.Err() == nil && (s.of < 1 || s.id < 0 || s.id >= s.of || s.next < 0) {
		d.Fail("split %d of %d at %d", s.id, s.of, s.next)
	}
	return s, d.Finish()
}

type source struct {
	ctx     *runtime.Context
	g       *Generator
	events  int64 // -1: unbounded
	rate    float64
	splits  []split
	cur     int
	ev      Event
	arena   runtime.Arena
	maxLen  int
	began   time.Time
	emitted int64
}

var (
	_ runtime.Source         = (*source)(nil)
	_ runtime.SplitSource    = (*source)(nil)
	_ runtime.StateDescriber = (*source)(nil)
)

func (s *source) Open(ctx *runtime.Context) error {
	s.ctx, s.maxLen = ctx, s.g.MaxLen()
	items := ctx.OperatorState().Get(positionsList)
	for _, it := range items {
		sp, err := decodeSplit(it)
		if err != nil {
			return err
		}
		if int(sp.id)%ctx.Parallelism() == ctx.Subtask() {
			s.splits = append(s.splits, sp)
		}
	}
	if items == nil && (!ctx.Restored() || ctx.OperatorState().Empty()) {
		n := int64(ctx.Parallelism())
		s.splits = []split{{id: int64(ctx.Subtask()), of: n, next: int64(ctx.Subtask())}}
	}
	s.began = time.Now()
	return nil
}

func (s *source) end() int64 {
	if s.events < 0 {
		return 1<<63 - 1
	}
	return s.events
}

// Splits lists the splits not exhausted yet (one watermark each).
func (s *source) Splits(dst []uint32) []uint32 {
	for _, sp := range s.splits {
		if sp.next < s.end() {
			dst = append(dst, uint32(sp.id))
		}
	}
	return dst
}

func (s *source) Poll(b *runtime.Batch) error {
	room := cap(b.Records) - len(b.Records)
	if s.rate > 0 {
		perSubtask := s.rate / float64(s.ctx.Parallelism())
		due := int64(time.Since(s.began).Seconds()*perSubtask) + 1 - s.emitted
		if due <= 0 {
			wait := time.Duration(float64(time.Second) / perSubtask)
			select {
			case <-time.After(min(wait, 50*time.Millisecond)):
			case <-s.ctx.Wakeup():
			}
			return nil
		}
		room = int(min(int64(room), due))
	}
	end := s.end()
	for room > 0 {
		if len(s.splits) == 0 {
			return runtime.ErrEndOfInput
		}
		sp := &s.splits[s.cur]
		if sp.next >= end {
			s.splits = append(s.splits[:s.cur], s.splits[s.cur+1:]...)
			s.cur = 0
			continue
		}
		s.g.Next(sp.next, &s.ev)
		sp.next += sp.of
		val := s.arena.Append(s.maxLen, func(d []byte) []byte { return AppendJSON(d, &s.ev) })
		b.Records = append(b.Records, runtime.Record{Value: val, Timestamp: s.ev.DateTime, Split: uint32(sp.id)})
		s.emitted++
		room--
		if s.cur++; s.cur >= len(s.splits) {
			s.cur = 0
		}
	}
	return nil
}

func (s *source) SnapshotState(int64) error {
	items := make([][]byte, len(s.splits))
	for i, sp := range s.splits {
		items[i] = sp.encode()
	}
	// Exhausted splits are kept, so a restore does not restart them.
	s.ctx.OperatorState().Set(positionsList, state.Union, items)
	return nil
}

// DescribeState shows the next event of each split (savepoint inspect).
func (s *source) DescribeState() map[string]any {
	next := map[string]int64{}
	for _, sp := range s.splits {
		next[strconv.FormatInt(sp.id, 10)] = sp.next
	}
	return map[string]any{"nextEventBySplit": next}
}

func (s *source) Close() error { return nil }
