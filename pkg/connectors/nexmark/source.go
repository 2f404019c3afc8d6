package nexmark

import (
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/connectors/internal/splits"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// options of the nexmark source; unset workload options take
// DefaultConfig's values.
type options struct {
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
func (o options) config() Config {
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
	var o options
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
		return &source{g: g, events: events, pacer: splits.Pacer{Rate: o.Rate}}
	}}
}

// The timeline is cut into splits (pkg/connectors/internal/splits): split
// s of S holds events s, s+S, s+2S…, so each split's event times never
// decrease.
const positionsList = "positions"

type source struct {
	ctx    *runtime.Context
	g      *Generator
	events int64 // -1: unbounded
	splits *splits.Set
	pacer  splits.Pacer
	ev     Event
	arena  runtime.Arena
	maxLen int
}

var (
	_ runtime.Source         = (*source)(nil)
	_ runtime.SplitSource    = (*source)(nil)
	_ runtime.StateDescriber = (*source)(nil)
)

func (s *source) Open(ctx *runtime.Context) error {
	s.ctx, s.maxLen = ctx, s.g.MaxLen()
	var restored []splits.Split
	for _, it := range ctx.OperatorState().Get(positionsList) {
		sp, err := splits.Decode("nexmark split", it)
		if err != nil {
			return err
		}
		restored = append(restored, sp)
	}
	end := int64(splits.Unbounded)
	if s.events >= 0 {
		end = s.events
	}
	s.splits = splits.Open(ctx, restored, 0, end)
	s.pacer.Start()
	return nil
}

// Splits lists the splits not exhausted yet (one watermark each).
func (s *source) Splits(dst []uint32) []uint32 { return s.splits.Active(dst) }

func (s *source) Poll(b *runtime.Batch) error {
	for room := s.pacer.Room(s.ctx, cap(b.Records)-len(b.Records)); room > 0; room-- {
		n, split, ok := s.splits.Next()
		if !ok {
			return runtime.ErrEndOfInput
		}
		s.g.Next(n, &s.ev)
		val := s.arena.Append(s.maxLen, func(d []byte) []byte { return AppendJSON(d, &s.ev) })
		b.Records = append(b.Records, runtime.Record{Value: val, Timestamp: s.ev.DateTime, Split: split})
		s.pacer.Emitted(1)
	}
	return nil
}

// RecycleValues: the engine knows no record emitted so far is read any
// more (runtime.ValueRecycler), so the next events are written over them.
func (s *source) RecycleValues() { s.arena.Rewind() }

func (s *source) SnapshotState(int64) error {
	s.splits.Snapshot(s.ctx, positionsList)
	return nil
}

// DescribeState shows the next event of each split (savepoint inspect).
func (s *source) DescribeState() map[string]any {
	return map[string]any{"nextEventBySplit": s.splits.Describe()}
}

func (s *source) Close() error { return nil }
