package nexmark_test

import (
	"encoding/json"
	"sort"
	"strconv"

	"github.com/flinkgo/flinkgo/pkg/connectors/nexmark"
)

// The queries in plain Go over the generator's events: what the SQL of
// nexmark/nexmark computes, written from the SQL, not from the job specs.

func bids(evs []nexmark.Event) []nexmark.Event { return ofKind(evs, nexmark.KindBid) }

func ofKind(evs []nexmark.Event, k nexmark.Kind) []nexmark.Event {
	var out []nexmark.Event
	for _, e := range evs {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

func refQ0(evs []nexmark.Event) (out []map[string]any) {
	for _, e := range bids(evs) {
		b := e.Bid
		out = append(out, map[string]any{"auction": b.Auction, "bidder": b.Bidder, "price": b.Price, "dateTime": e.DateTime, "extra": string(b.Extra)})
	}
	return out
}

// refQ1's price is SQL's DECIMAL(23, 3) product, computed in integers:
// the float nearest price × 908 / 1000.
func refQ1(evs []nexmark.Event) (out []map[string]any) {
	for _, e := range bids(evs) {
		b := e.Bid
		out = append(out, map[string]any{"auction": b.Auction, "bidder": b.Bidder, "price": float64(b.Price*908) / 1000, "dateTime": e.DateTime, "extra": string(b.Extra)})
	}
	return out
}

func refQ2(evs []nexmark.Event) (out []map[string]any) {
	for _, e := range bids(evs) {
		if e.Bid.Auction%123 == 0 {
			out = append(out, map[string]any{"auction": e.Bid.Auction, "price": e.Bid.Price})
		}
	}
	return out
}

func refQ3(evs []nexmark.Event) (out []map[string]any) {
	persons := map[int64]nexmark.Person{}
	for _, e := range ofKind(evs, nexmark.KindPerson) {
		if s := string(e.Person.State); s == "OR" || s == "ID" || s == "CA" {
			persons[e.Person.ID] = e.Person
		}
	}
	for _, e := range ofKind(evs, nexmark.KindAuction) {
		if p, ok := persons[e.Auction.Seller]; ok && e.Auction.Category == 10 {
			out = append(out, map[string]any{"name": string(p.Name), "city": string(p.City), "state": string(p.State), "id": e.Auction.ID})
		}
	}
	return out
}

// refQ4 is the average winning bid per category, as its final value.
func refQ4(evs []nexmark.Event) (out []map[string]any) {
	byAuction := map[int64][]nexmark.Event{}
	for _, e := range bids(evs) {
		byAuction[e.Bid.Auction] = append(byAuction[e.Bid.Auction], e)
	}
	total, n := map[int64]float64{}, map[int64]int64{}
	for _, e := range ofKind(evs, nexmark.KindAuction) {
		a := e.Auction
		best, found := int64(0), false
		for _, b := range byAuction[a.ID] {
			if b.DateTime >= e.DateTime && b.DateTime <= a.Expires {
				best, found = max(best, b.Bid.Price), true
			}
		}
		if found {
			total[a.Category] += float64(best)
			n[a.Category]++
		}
	}
	for c := range n {
		out = append(out, map[string]any{"category": c, "total": total[c], "auctions": n[c], "avg": total[c] / float64(n[c])})
	}
	return out
}

// lastPerCategory keeps, of q4's running averages, the last per category
// (the one counting the most auctions).
func lastPerCategory(got []string) []string {
	last := map[float64]map[string]any{}
	for _, g := range got {
		var m map[string]any
		_ = json.Unmarshal([]byte(g), &m)
		c := m["category"].(float64)
		if l, ok := last[c]; !ok || m["auctions"].(float64) > l["auctions"].(float64) {
			last[c] = m
		}
	}
	var out []map[string]any
	for _, m := range last {
		out = append(out, m)
	}
	return sorted(out)
}

func floorTo(ts, step int64) int64 {
	r := ts % step
	if r < 0 {
		r += step
	}
	return ts - r
}

// refQ5: per sliding window of 10 s every 2 s, the auctions with the most
// bids.
func refQ5(evs []nexmark.Event) (out []map[string]any) {
	counts := map[int64]map[int64]int64{} // window end -> auction -> bids
	for _, e := range bids(evs) {
		for s := floorTo(e.DateTime, 2000); s > e.DateTime-10000; s -= 2000 {
			end := s + 10000
			if counts[end] == nil {
				counts[end] = map[int64]int64{}
			}
			counts[end][e.Bid.Auction]++
		}
	}
	for _, c := range counts {
		maxn := int64(0)
		for _, n := range c {
			maxn = max(maxn, n)
		}
		for a, n := range c {
			if n >= maxn {
				out = append(out, map[string]any{"auction": a, "num": n})
			}
		}
	}
	return out
}

// refQ7: the bids whose price is the highest of a 10 s window, with
// dateTime between the window's end - 10 s and its end.
func refQ7(evs []nexmark.Event) (out []map[string]any) {
	bs := bids(evs)
	maxPrice := map[int64]int64{} // window end -> max price
	for _, e := range bs {
		end := floorTo(e.DateTime, 10000) + 10000
		maxPrice[end] = max(maxPrice[end], e.Bid.Price)
	}
	for end, p := range maxPrice {
		for _, e := range bs {
			if e.Bid.Price == p && e.DateTime >= end-10000 && e.DateTime <= end {
				b := e.Bid
				out = append(out, map[string]any{"auction": b.Auction, "bidder": b.Bidder, "price": b.Price, "dateTime": e.DateTime, "extra": string(b.Extra)})
			}
		}
	}
	return out
}

// refQ8: persons who created an auction in the 10 s window they registered in.
func refQ8(evs []nexmark.Event) (out []map[string]any) {
	sellers := map[[2]int64]bool{} // window start, seller
	for _, e := range ofKind(evs, nexmark.KindAuction) {
		sellers[[2]int64{floorTo(e.DateTime, 10000), e.Auction.Seller}] = true
	}
	for _, e := range ofKind(evs, nexmark.KindPerson) {
		start := floorTo(e.DateTime, 10000)
		if sellers[[2]int64{start, e.Person.ID}] {
			out = append(out, map[string]any{"id": e.Person.ID, "name": string(e.Person.Name), "starttime": start})
		}
	}
	return out
}

// refQ11: bids per bidder session (bids no more than 10 s apart).
func refQ11(evs []nexmark.Event) (out []map[string]any) {
	byBidder := map[int64][]int64{}
	for _, e := range bids(evs) {
		byBidder[e.Bid.Bidder] = append(byBidder[e.Bid.Bidder], e.DateTime)
	}
	for bidder, ts := range byBidder {
		sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
		start, n := ts[0], int64(0)
		for i, t := range ts {
			if i > 0 && t > ts[i-1]+10000 {
				out = append(out, session(bidder, start, ts[i-1], n))
				start, n = t, 0
			}
			n++
		}
		out = append(out, session(bidder, start, ts[len(ts)-1], n))
	}
	return out
}

func session(bidder, first, last, n int64) map[string]any {
	return map[string]any{"key": strconv.FormatInt(bidder, 10), "windowStart": first, "windowEnd": last + 10000, "bid_count": n}
}

// refQ12: the bids per bidder; which processing-time window they fell in
// depends on the clock, so the test compares the totals per bidder.
func refQ12(evs []nexmark.Event) (out []map[string]any) {
	n := map[int64]int64{}
	for _, e := range bids(evs) {
		n[e.Bid.Bidder]++
	}
	for b, c := range n {
		out = append(out, map[string]any{"key": strconv.FormatInt(b, 10), "bid_count": c})
	}
	return out
}

// totalPerBidder sums q12's window counts per bidder.
func totalPerBidder(got []string) []string {
	n := map[string]float64{}
	for _, g := range got {
		var m map[string]any
		_ = json.Unmarshal([]byte(g), &m)
		n[m["key"].(string)] += m["bid_count"].(float64)
	}
	var out []map[string]any
	for k, c := range n {
		out = append(out, map[string]any{"key": k, "bid_count": c})
	}
	return sorted(out)
}
