package nexmark_test

import (
	"encoding/json"
	"fmt"
	"hash/crc32"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/connectors/nexmark"
)

func newGen(t testing.TB, c nexmark.Config) *nexmark.Generator {
	t.Helper()
	g, err := nexmark.New(c)
	require.NoError(t, err)
	return g
}

// Event n is a pure function of the config and n: two generators, a
// reused Event and a fresh one all give the same bytes.
func TestEventsArePureFunctionsOfTheirNumber(t *testing.T) {
	a, b := newGen(t, nexmark.DefaultConfig()), newGen(t, nexmark.DefaultConfig())
	var reused nexmark.Event
	for _, n := range []int64{0, 1, 3, 4, 49, 50, 12345, 1 << 40} {
		e := a.At(n)
		b.Next(n, &reused)
		require.Equal(t, string(nexmark.AppendJSON(nil, &e)), string(nexmark.AppendJSON(nil, &reused)), "event %d", n)
	}
	c := nexmark.DefaultConfig()
	c.Seed = 7
	e0, e1 := a.At(4), newGen(t, c).At(4)
	require.NotEqual(t, string(nexmark.AppendJSON(nil, &e0)), string(nexmark.AppendJSON(nil, &e1)), "the seed changes the events")
}

// The first events are pinned: a change to the generator changes every
// reference and every benchmark, and must be deliberate.
func TestPinnedEvents(t *testing.T) {
	g := newGen(t, nexmark.DefaultConfig())
	sum := crc32.NewIEEE()
	for n := int64(0); n < 10_000; n++ {
		e := g.At(n)
		sum.Write(nexmark.AppendJSON(nil, &e))
	}
	e := g.At(4)
	require.Equal(t, `{"event_type":2,"auction":1000,"bidder":1001,"price":347556,"channel":"Apple","url":"https://www.nexmark.com/ramx/nux/jkc/item.htm?query=1","dateTime":1767225600000,"extra":"ihdjiifmwvbeffdgwsvuvubqyyrplwndfjdaonbwmayssiwhrxydtarrolnuesyo"}`,
		string(nexmark.AppendJSON(nil, &e)))
	require.Equal(t, uint32(0x2a88cc2), sum.Sum32(), "checksum of the first 10,000 events")
}

// The kinds follow the proportions exactly (1:3:46 by default), persons and
// auctions get consecutive ids from 1000, and event time advances by the
// inter-event delay (1/eventRate s).
func TestProportionsIdsAndEventTime(t *testing.T) {
	c := nexmark.DefaultConfig()
	c.EventRate = 300 // 3.33 ms apart: ms rounding shows
	g := newGen(t, c)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	var kinds [3]int64
	nextPerson, nextAuction := int64(nexmark.FirstPersonID), int64(nexmark.FirstAuctionID)
	prevTS := int64(0)
	for n := int64(0); n < 50*400; n++ {
		e := g.At(n)
		kinds[e.Kind]++
		require.Equal(t, start+n*1000/300, e.DateTime, "event %d", n)
		require.GreaterOrEqual(t, e.DateTime, prevTS)
		prevTS = e.DateTime
		switch e.Kind {
		case nexmark.KindPerson:
			require.Equal(t, nextPerson, e.Person.ID)
			nextPerson++
		case nexmark.KindAuction:
			require.Equal(t, nextAuction, e.Auction.ID)
			nextAuction++
		}
		if n%50 == 49 {
			require.Equal(t, [3]int64{(n + 1) / 50, (n + 1) / 50 * 3, (n + 1) / 50 * 46}, kinds)
		}
	}
}

// Bids name existing (or about to exist) auctions and persons; hot
// auctions get half the bids, hot bidders three quarters, hot sellers
// three quarters of the auctions; an auction expires after it starts,
// within twice the time numInFlightAuctions auctions take to appear.
func TestReferencesHotRatiosAndExpiry(t *testing.T) {
	c := nexmark.DefaultConfig()
	g := newGen(t, c)
	lastPerson, lastAuction := int64(-1), int64(-1)
	var bids, hotAuction, hotBidder, auctions, hotSeller int
	check := func(ok bool, n int64, what string) {
		if !ok {
			e := g.At(n)
			t.Fatalf("event %d: %s: %s", n, what, nexmark.AppendJSON(nil, &e))
		}
	}
	var e nexmark.Event
	for n := int64(0); n < 200_000; n++ {
		g.Next(n, &e)
		switch e.Kind {
		case nexmark.KindPerson:
			lastPerson = e.Person.ID
		case nexmark.KindAuction:
			a := e.Auction
			lastAuction = a.ID
			auctions++
			check(a.Seller <= lastPerson+10, n, "seller ahead of the persons")
			if a.Seller == (lastPerson-1000)/100*100+1000 {
				hotSeller++
			}
			horizon := g.TimeOf(n+100*50/3) - e.DateTime
			check(a.Expires > e.DateTime && a.Expires <= e.DateTime+2*horizon+1, n, "expiry")
			check(a.Category >= 10 && a.Category < 15, n, "category")
			check(a.Reserve > a.InitialBid, n, "reserve")
		case nexmark.KindBid:
			b := e.Bid
			bids++
			check(b.Auction >= nexmark.FirstAuctionID && b.Auction <= lastAuction+10 && b.Auction >= lastAuction-100-10, n, "auction")
			check(b.Bidder <= lastPerson+10, n, "bidder")
			if b.Auction == (lastAuction-1000)/100*100+1000 {
				hotAuction++
			}
			if b.Bidder == (lastPerson-1000)/100*100+1001 {
				hotBidder++
			}
			check(b.Price >= 100 && b.Price <= 100_000_000, n, "price")
		}
	}
	within := func(got, of int, want float64) {
		t.Helper()
		f := float64(got) / float64(of)
		require.InDelta(t, want, f, 0.02, "%d of %d", got, of)
	}
	within(hotAuction, bids, 0.5)
	within(hotBidder, bids, 0.75)
	within(hotSeller, auctions, 0.75)
}

// Events are valid JSON with Nexmark's field names, within MaxLen, and
// padded to the average sizes.
func TestJSONFieldsAndSizes(t *testing.T) {
	g := newGen(t, nexmark.DefaultConfig())
	var size [3]int
	var count [3]int
	for n := int64(0); n < 5000; n++ {
		e := g.At(n)
		b := nexmark.AppendJSON(nil, &e)
		require.LessOrEqual(t, len(b), g.MaxLen())
		var m map[string]any
		require.NoError(t, json.Unmarshal(b, &m), string(b))
		require.Equal(t, float64(e.Kind), m["event_type"])
		require.Equal(t, float64(e.DateTime), m["dateTime"])
		var want []string
		switch e.Kind {
		case nexmark.KindPerson:
			want = []string{"id", "name", "emailAddress", "creditCard", "city", "state", "extra"}
			require.Equal(t, float64(e.Person.ID), m["id"])
		case nexmark.KindAuction:
			want = []string{"id", "itemName", "description", "initialBid", "reserve", "expires", "seller", "category", "extra"}
			require.Equal(t, float64(e.Auction.Seller), m["seller"])
		case nexmark.KindBid:
			want = []string{"auction", "bidder", "price", "channel", "url", "extra"}
			require.Equal(t, float64(e.Bid.Price), m["price"])
		}
		require.Len(t, m, len(want)+2, string(b))
		for _, f := range want {
			require.Contains(t, m, f)
		}
		size[e.Kind] += len(b)
		count[e.Kind]++
	}
	for k, avg := range []int{200, 500, 100} {
		got := size[k] / count[k]
		// JSON adds the member names (and a bid its url) to Nexmark's
		// idealized binary size.
		require.GreaterOrEqual(t, got, avg, "average JSON size of %s", nexmark.Kind(k))
		require.LessOrEqual(t, got, avg+200, "average JSON size of %s", nexmark.Kind(k))
		t.Logf("%s: %d bytes on average (Nexmark's idealized size %d)", nexmark.Kind(k), got, avg)
	}
}

func TestConfigProblems(t *testing.T) {
	c := nexmark.DefaultConfig()
	c.EventRate, c.Bid, c.StartTime, c.AvgBidSize = 0, 0, "yesterday", -1
	var fields []string
	for _, p := range c.Problems() {
		fields = append(fields, p.Field)
	}
	require.Equal(t, []string{"eventRate", "startTime", "bidProportion", "avgBidByteSize"}, fields, fmt.Sprint(c.Problems()))
}
