package nexmark

import (
	"fmt"
	"time"
)

// Config is the generator's workload, Nexmark's NexmarkConfiguration for
// one event timeline; DefaultConfig gives Nexmark's defaults. Field names
// in Problems are the spec's option names.
type Config struct {
	// EventRate is the event-time rate: event n happens at
	// StartTime + n/EventRate seconds (Nexmark's first-event.rate, which
	// the published benchmark sets to 10,000,000). It does not pace
	// emission; the source's rate option does. eventRate; default 10,000.
	EventRate int64
	// StartTime is the event time of event 0, RFC 3339 (Nexmark's base
	// time; fixed, so runs are reproducible). startTime; default
	// 2026-01-01T00:00:00Z.
	StartTime string
	// Proportions of persons, auctions and bids: of every
	// Person+Auction+Bid consecutive events, the first Person are persons,
	// the next Auction auctions, the rest bids. personProportion (1),
	// auctionProportion (3), bidProportion (46).
	Person, Auction, Bid int64
	// Hot ratios: a bid is for a hot auction with probability 1-1/HotAuctions,
	// by a hot bidder with 1-1/HotBidders; an auction is by a hot seller
	// with 1-1/HotSellers. hotAuctionRatio (2), hotBiddersRatio (4),
	// hotSellersRatio (4).
	HotAuctions, HotBidders, HotSellers int64
	// ActivePeople bounds the persons a random bid or auction picks from
	// (the most recent ones). numActivePeople; default 1000.
	ActivePeople int64
	// InFlightAuctions is how many recent auctions a random bid picks from,
	// and sets auction lengths (an auction lasts about as long as it takes
	// to create that many more). numInFlightAuctions; default 100.
	InFlightAuctions int64
	// Average sizes of the events in bytes (the extra field pads them).
	// avgPersonByteSize (200), avgAuctionByteSize (500), avgBidByteSize (100).
	AvgPersonSize, AvgAuctionSize, AvgBidSize int64
	// Seed picks every pseudo-random choice. seed; default 0.
	Seed int64
}

// defaultStartTime is the default Config.StartTime.
const defaultStartTime = "2026-01-01T00:00:00Z"

// DefaultConfig returns Nexmark's default workload.
func DefaultConfig() Config {
	return Config{EventRate: 10_000, StartTime: defaultStartTime, Person: 1, Auction: 3, Bid: 46,
		HotAuctions: 2, HotBidders: 4, HotSellers: 4, ActivePeople: 1000, InFlightAuctions: 100,
		AvgPersonSize: 200, AvgAuctionSize: 500, AvgBidSize: 100}
}

// maxAvgSize bounds the average sizes, so an event's length is bounded.
const maxAvgSize = 1 << 16

// problem is one invalid field of a Config: Field is its option name.
type problem struct{ Field, Msg string }

func (p problem) Error() string { return p.Field + ": " + p.Msg }

// Problems lists every invalid field of c (none: c is valid).
func (c Config) Problems() []problem {
	var ps []problem
	add := func(field, format string, args ...any) { ps = append(ps, problem{field, fmt.Sprintf(format, args...)}) }
	atLeast := func(field string, v, lo int64) {
		if v < lo {
			add(field, "must be at least %d, got %d", lo, v)
		}
	}
	atLeast("eventRate", c.EventRate, 1)
	if _, err := time.Parse(time.RFC3339Nano, c.StartTime); err != nil {
		add("startTime", "must be an RFC 3339 time such as %q, got %q", defaultStartTime, c.StartTime)
	}
	atLeast("personProportion", c.Person, 1)
	atLeast("auctionProportion", c.Auction, 1)
	atLeast("bidProportion", c.Bid, 1)
	atLeast("hotAuctionRatio", c.HotAuctions, 1)
	atLeast("hotBiddersRatio", c.HotBidders, 1)
	atLeast("hotSellersRatio", c.HotSellers, 1)
	atLeast("numActivePeople", c.ActivePeople, 1)
	atLeast("numInFlightAuctions", c.InFlightAuctions, 1)
	for _, s := range []struct {
		field string
		v     int64
	}{{"avgPersonByteSize", c.AvgPersonSize}, {"avgAuctionByteSize", c.AvgAuctionSize}, {"avgBidByteSize", c.AvgBidSize}} {
		if s.v < 0 || s.v > maxAvgSize {
			add(s.field, "must be between 0 and %d, got %d", maxAvgSize, s.v)
		}
	}
	return ps
}
