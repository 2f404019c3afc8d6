package nexmark

import (
	"math"
	"math/bits"
	"sync"
	"time"

	"github.com/flinkgo/flinkgo/pkg/connectors/internal/splitmix"
	"github.com/flinkgo/flinkgo/pkg/internal/itoa"
)

// Kind is the type of an event.
type Kind uint8

const (
	KindPerson Kind = iota
	KindAuction
	KindBid
)

func (k Kind) String() string {
	switch k {
	case KindPerson:
		return "person"
	case KindAuction:
		return "auction"
	case KindBid:
		return "bid"
	}
	return "Kind(?)"
}

// Ids start at these values, as in Nexmark, so that queries find matches
// even on small runs.
const (
	FirstPersonID   = 1000
	FirstAuctionID  = 1000
	firstCategoryID = 10
	numCategories   = 5
	// personLead and auctionLead: a random bid or auction may name a
	// person or auction up to this many ids ahead of the last one created
	// (it is created a little later: joins must wait for it).
	personLead  = 10
	auctionLead = 10
	// hotGroup: a hot seller, bidder or auction is the first of the last
	// hotGroup created (a hot bidder the second, so hot bidders are not
	// hot sellers).
	hotGroup    = 100
	numChannels = 10_000
)

// Person is a person event's fields (Nexmark's Person).
type Person struct {
	ID                                          int64
	Name, Email, CreditCard, City, State, Extra []byte
}

// Auction is an auction event's fields (Nexmark's Auction). Expires is
// when it closes (ms); its bids are those between its DateTime and Expires.
type Auction struct {
	ID                        int64
	ItemName, Description     []byte
	InitialBid, Reserve       int64
	Expires, Seller, Category int64
	Extra                     []byte
}

// Bid is a bid event's fields (Nexmark's Bid).
type Bid struct {
	Auction, Bidder, Price int64
	Channel, URL, Extra    []byte
	// chanURL is Channel, `","url":"` and URL as the generator's table
	// holds them, the channel's chanN bytes first (AppendJSON copies it
	// whole while they are still its).
	chanURL []byte
	chanN   int
}

// Event is one event: its number in the timeline, its kind, its event time
// (DateTime, ms since the epoch) and the fields of its kind. Byte slices
// point into the Event's own buffer or the generator's tables: valid until
// the next Next into this Event; copy what you keep.
type Event struct {
	Num      int64
	Kind     Kind
	DateTime int64
	Person   Person
	Auction  Auction
	Bid      Bid
	buf      []byte
	// timeText[:timeLen] is timeOf in decimal (appendTime).
	timeOf   int64
	timeText [20]byte
	timeLen  int
}

// Generator makes the events of one timeline. Event n is a pure function of
// the Config and n (Next), so any split of the timeline, any parallelism and
// any restore see the same events. A Generator holds the read-only tables
// of its seed; Next writes into the caller's Event, so one Generator may be
// shared by goroutines with their own Events.
type Generator struct {
	c              Config
	total          int64
	startMs        int64
	seed           uint64
	auctionHorizon int64 // events until InFlightAuctions more auctions exist
	// The hot channels and their urls: entry i is
	// hotText[hotOff[i]:hotOff[i+1]], the channel's hotLen[i] bytes, then
	// `","url":"` and the url, so that a bid copies both into its JSON at
	// once (see Bid.chanURL).
	hotText []byte
	hotOff  [len(hotChannelNames) + 1]uint32
	hotLen  [len(hotChannelNames)]uint8
	// chanURLs holds, for each of the 10,000 other channels, what its url
	// does not share with the others: at 16*i, a byte with the length of
	// the url's three random path segments and, in its top bit, whether
	// the url ends in a channel_id; then the segments. A bid writes its
	// channel and url from it (appendChannel). 160 KiB stay in the CPU's
	// caches where the whole strings, 1 MiB, did not: a random channel's
	// url was a cache miss a bid, a tenth of a bid's time.
	chanURLs   []byte
	maxChanURL int // the longest channel, urlSep and url
}

// urlSep is what joins a channel and its url in a Bid's chanURL: the
// JSON between the two values.
const urlSep = `","url":"`

// The parts of a url baseURL makes that are the same in all: it is
// urlHead, three random segments each ending in '/', then urlTail.
const (
	urlHead    = "https://www.nexmark.com/"
	urlTail    = "item.htm?query=1"
	urlIDParam = "&channel_id="
	urlSlot    = 16
)

var hotChannelNames = [4]string{"Google", "Facebook", "Baidu", "Apple"}

// New returns the generator of c, or the first of c's Problems.
func New(c Config) (*Generator, error) {
	if ps := c.Problems(); len(ps) > 0 {
		return nil, ps[0]
	}
	start, _ := time.Parse(time.RFC3339Nano, c.StartTime)
	g := &Generator{c: c, total: c.Person + c.Auction + c.Bid, startMs: start.UnixMilli(), seed: mix64(uint64(c.Seed) + golden)}
	g.auctionHorizon = c.InFlightAuctions * g.total / c.Auction
	r := rng{s: mix64(g.seed ^ 0x6e65786d61726b)} // the tables' own stream
	// The hot urls are drawn first, then the table's, from one stream.
	for i, name := range hotChannelNames {
		g.hotLen[i] = uint8(len(name))
		g.hotText = append(append(append(g.hotText, name...), urlSep...), baseURL(&r)...)
		g.hotOff[i+1] = uint32(len(g.hotText))
		g.maxChanURL = max(g.maxChanURL, int(g.hotOff[i+1]-g.hotOff[i]))
	}
	g.chanURLs = make([]byte, urlSlot*numChannels)
	for i := range int64(numChannels) {
		u := baseURL(&r)
		segs := u[len(urlHead) : len(u)-len(urlTail)]
		slot := g.chanURLs[urlSlot*i : urlSlot*(i+1)]
		if len(segs) >= urlSlot || copy(slot[1:], segs) != len(segs) {
			panic("nexmark: a url's segments outgrew their slot") // 3 segments of at most 4 letters and '/'
		}
		slot[0] = byte(len(segs))
		if r.intn(10) > 0 {
			slot[0] |= 0x80
		}
		b, _ := g.appendChannel(nil, i)
		g.maxChanURL = max(g.maxChanURL, len(b))
	}
	return g, nil
}

// appendChannel appends channel i of the table, urlSep and its url, and
// returns how many bytes the channel took.
func (g *Generator) appendChannel(b []byte, i int64) ([]byte, int) {
	start := len(b)
	b = itoa.AppendInt(append(b, "channel-"...), i)
	c := len(b) - start
	slot := g.chanURLs[urlSlot*i : urlSlot*(i+1) : urlSlot*(i+1)]
	b = append(append(b, urlSep+urlHead...), slot[1:1+slot[0]&0x7f]...)
	b = append(b, urlTail...)
	if slot[0]&0x80 != 0 {
		b = itoa.AppendInt(append(b, urlIDParam...), abs32(int32(bits.Reverse32(uint32(i)))))
	}
	return b, c
}

func abs32(x int32) int64 {
	if x < 0 {
		return -int64(x)
	}
	return int64(x)
}

// baseURL is a Nexmark bid url: three short random path parts.
func baseURL(r *rng) []byte {
	u := []byte(urlHead)
	for i := 0; i < 3; i++ {
		u = r.appendString(u, 5, '_')
		u = append(u, '/')
	}
	return append(u, urlTail...)
}

// Config returns the generator's workload.
func (g *Generator) Config() Config { return g.c }

// KindOf returns the kind of event n: of every total consecutive events,
// the first Person are persons, then Auction auctions, then bids.
func (g *Generator) KindOf(n int64) Kind {
	switch off := n % g.total; {
	case off < g.c.Person:
		return KindPerson
	case off < g.c.Person+g.c.Auction:
		return KindAuction
	}
	return KindBid
}

// TimeOf is the event time of event n: StartTime + n/EventRate s, in ms
// rounded down. It does not decrease with n.
func (g *Generator) TimeOf(n int64) int64 {
	hi, lo := bits.Mul64(uint64(n), 1000)
	q, _ := bits.Div64(hi%uint64(g.c.EventRate), lo, uint64(g.c.EventRate))
	return g.startMs + int64(q)
}

// lastPerson is the base-0 id of the last person created by event n (n
// itself when n is a person).
func (g *Generator) lastPerson(n int64) int64 {
	epoch, off := n/g.total, n%g.total
	if off >= g.c.Person {
		off = g.c.Person - 1
	}
	return epoch*g.c.Person + off
}

// lastAuction is the base-0 id of the last auction created by event n.
func (g *Generator) lastAuction(n int64) int64 {
	epoch, off := n/g.total, n%g.total
	switch {
	case off < g.c.Person:
		epoch--
		off = g.c.Auction - 1
	case off >= g.c.Person+g.c.Auction:
		off = g.c.Auction - 1
	default:
		off -= g.c.Person
	}
	return epoch*g.c.Auction + off
}

// randomPerson picks one of the active persons, or one a little ahead.
func (g *Generator) randomPerson(n int64, r *rng) int64 {
	people := g.lastPerson(n) + 1
	active := min(people, g.c.ActivePeople)
	return people - active + r.intn(active+personLead)
}

// randomAuction picks one of the auctions in flight, or one a little ahead.
func (g *Generator) randomAuction(n int64, r *rng) int64 {
	last := g.lastAuction(n)
	lo := max(last-g.c.InFlightAuctions, 0)
	return lo + r.intn(last-lo+1+auctionLead)
}

// Next fills e with event n.
func (g *Generator) Next(n int64, e *Event) {
	r := rng{s: mix64(g.seed ^ uint64(n)*golden)}
	if cap(e.buf) < g.maxLen() {
		e.buf = make([]byte, 0, g.maxLen())
	}
	e.buf = e.buf[:0]
	e.Num, e.Kind, e.DateTime = n, g.KindOf(n), g.TimeOf(n)
	switch e.Kind {
	case KindPerson:
		g.person(n, &r, e)
	case KindAuction:
		g.auction(n, &r, e)
	default:
		g.bid(n, &r, e)
	}
}

// At returns event n in an Event of its own (for tests and references).
func (g *Generator) At(n int64) Event {
	var e Event
	g.Next(n, &e)
	return e
}

var (
	usStates   = []string{"AZ", "CA", "ID", "OR", "WA", "WY"}
	usCities   = []string{"Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland", "Bend", "Redmond", "Seattle", "Kent", "Cheyenne"}
	firstNames = []string{"Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter"}
	lastNames  = []string{"Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris"}
)

// field appends to e's buffer with fn and returns what it appended.
func (e *Event) field(fn func([]byte) []byte) []byte {
	start := len(e.buf)
	e.buf = fn(e.buf)
	return e.buf[start:len(e.buf):len(e.buf)]
}

func (g *Generator) person(n int64, r *rng, e *Event) {
	p := &e.Person
	p.ID = g.lastPerson(n) + FirstPersonID
	p.Name = e.field(func(b []byte) []byte {
		b = append(b, firstNames[r.intn(int64(len(firstNames)))]...)
		return append(append(b, ' '), lastNames[r.intn(int64(len(lastNames)))]...)
	})
	p.Email = e.field(func(b []byte) []byte {
		b = append(r.appendString(b, 7, ' '), '@')
		return append(r.appendString(b, 5, ' '), ".com"...)
	})
	p.CreditCard = e.field(func(b []byte) []byte {
		for i := 0; i < 4; i++ {
			if i > 0 {
				b = append(b, ' ')
			}
			v := r.intn(10000)
			b = append(b, byte('0'+v/1000), byte('0'+v/100%10), byte('0'+v/10%10), byte('0'+v%10))
		}
		return b
	})
	p.City = []byte(usCities[r.intn(int64(len(usCities)))])
	p.State = []byte(usStates[r.intn(int64(len(usStates)))])
	size := 8 + len(p.Name) + len(p.Email) + len(p.CreditCard) + len(p.City) + len(p.State)
	p.Extra = extra(r, size, g.c.AvgPersonSize)
}

func (g *Generator) auction(n int64, r *rng, e *Event) {
	a := &e.Auction
	a.ID = g.lastAuction(n) + FirstAuctionID
	if r.intn(g.c.HotSellers) > 0 {
		a.Seller = g.lastPerson(n) / hotGroup * hotGroup
	} else {
		a.Seller = g.randomPerson(n, r)
	}
	a.Seller += FirstPersonID
	a.Category = firstCategoryID + r.intn(numCategories)
	a.InitialBid = price(r)
	horizon := g.TimeOf(n+g.auctionHorizon) - e.DateTime
	a.Expires = e.DateTime + 1 + r.intn(max(2*horizon, 1))
	a.ItemName = e.field(func(b []byte) []byte { return r.appendString(b, 20, ' ') })
	a.Description = e.field(func(b []byte) []byte { return r.appendString(b, 100, ' ') })
	a.Reserve = a.InitialBid + price(r)
	size := 8 + len(a.ItemName) + len(a.Description) + 8 + 8 + 8 + 8 + 8
	a.Extra = extra(r, size, g.c.AvgAuctionSize)
}

func (g *Generator) bid(n int64, r *rng, e *Event) {
	b := &e.Bid
	if r.intn(g.c.HotAuctions) > 0 {
		b.Auction = g.lastAuction(n) / hotGroup * hotGroup
	} else {
		b.Auction = g.randomAuction(n, r)
	}
	b.Auction += FirstAuctionID
	if r.intn(g.c.HotBidders) > 0 {
		b.Bidder = g.lastPerson(n)/hotGroup*hotGroup + 1
	} else {
		b.Bidder = g.randomPerson(n, r)
	}
	b.Bidder += FirstPersonID
	b.Price = price(r)
	var c int
	if r.intn(2) > 0 {
		i := r.intn(int64(len(hotChannelNames)))
		from, to := g.hotOff[i], g.hotOff[i+1]
		b.chanURL, c = g.hotText[from:to:to], int(g.hotLen[i])
	} else {
		start := len(e.buf)
		e.buf, c = g.appendChannel(e.buf, r.intn(numChannels))
		b.chanURL = e.buf[start:len(e.buf):len(e.buf)]
	}
	b.Channel, b.URL, b.chanN = b.chanURL[:c:c], b.chanURL[c+len(urlSep):], c
	b.Extra = extra(r, 8+8+8+8, g.c.AvgBidSize)
}

// price is Nexmark's price: 100 × 10^u for u uniform in [0, 6), rounded:
// cents from 1 dollar to a million, log-uniformly.
func price(r *rng) int64 { return priceOf(r.float()) }

// priceOf is price for u/6. Its value is exactPrice's, which it was
// before, computed as 10^(j/256) from a table times e^f for the rest
// (f < ln 10/256) by its series, a third of math.Exp's time. The two
// differ by under 1e-6 (relative errors of a few 1e-16 on at most 1e8),
// so they round alike except near a half, which takes exactPrice.
func priceOf(u float64) int64 {
	x := u * (6 * 256)
	j := int(x)
	f := (x - float64(j)) * (math.Ln10 / 256)
	y := pow10ths[j] * (1 + f*(1+f*(1.0/2+f*(1.0/6+f*(1.0/24+f*(1.0/120+f*(1.0/720))))))) * 100
	p := math.Round(y)
	if math.Abs(y-p) > 0.5-1e-5 {
		return exactPrice(u)
	}
	return int64(p)
}

// exactPrice is e^(6u ln 10) × 100 rounded (e^ rather than math.Pow:
// Pow cost a quarter of generating a bid).
func exactPrice(u float64) int64 { return int64(math.Round(math.Exp(u*(6*math.Ln10)) * 100)) }

// pow10ths[j] is 10^(j/256).
var pow10ths = func() (t [6*256 + 1]float64) {
	for j := range t {
		t[j] = math.Pow(10, float64(j)/256)
	}
	return t
}()

// extra pads an event whose fields take size bytes to avg bytes on
// average (± 20%): a slice of a fixed random text at a random offset, as
// Nexmark's generator takes it from one reusable string.
func extra(r *rng, size int, avg int64) []byte {
	want := int(avg) - size
	if want <= 0 {
		return nil
	}
	delta := int(math.Round(float64(want) * 0.2))
	n := want - delta
	if delta > 0 {
		n += int(r.intn(int64(2 * delta)))
	}
	pool := extraPool()[:poolLen(avg)]
	off := int(r.intn(int64(len(pool) - n)))
	return pool[off : off+n : off+n]
}

// poolLen is how much of the pool the extras of an average size avg are
// taken from: 16 KiB (it stays in the CPU's caches: a 1 MiB pool made
// copying the extras a quarter of the generator's time), or more for large
// averages, so offsets still vary.
func poolLen(avg int64) int { return int(min(max(1<<14, 8*avg), 1<<20)) }

var (
	poolOnce sync.Once
	pool     []byte
)

// extraPool is 1 MiB of pseudo-random lowercase letters, the same in every
// process (extra fields are slices of it).
func extraPool() []byte {
	poolOnce.Do(func() {
		r := rng{s: 0x65787472}
		pool = make([]byte, 1<<20)
		for i := 0; i < len(pool); {
			v := r.next()
			for k := 0; k < 13 && i < len(pool); k++ { // 26^13 < 2^64
				pool[i] = byte('a' + v%26)
				v /= 26
				i++
			}
		}
	})
	return pool
}

// bufLen bounds the bytes an event writes into its buffer: only name,
// email and credit card (person), item name and description (auction),
// and a channel of the table with its url (bid, under 100 bytes) go
// there; extras are pool slices, hot channels and urls table entries.
const bufLen = 160

func (g *Generator) maxLen() int { return bufLen }

// golden and mix64 are splitmix64's increment and finalizer.
const golden = splitmix.Golden

func mix64(x uint64) uint64 { return splitmix.Mix(x) }

// rng is a splitmix64 stream: each event draws from its own, seeded by the
// event number, so an event does not depend on any other.
type rng struct{ s uint64 }

func (r *rng) next() uint64 {
	r.s += golden
	return mix64(r.s)
}

// intn is uniform in [0, n) for n > 0 (Lemire's multiply-shift).
func (r *rng) intn(n int64) int64 { return int64(splitmix.Below(r.next(), uint64(n))) }

// float is uniform in [0, 1).
func (r *rng) float() float64 { return float64(r.next()>>11) / (1 << 53) }

// appendString appends Nexmark's random string of 3 to maxLen-1 letters,
// each 1/13 of the time special instead; a space special is trimmed at
// both ends.
func (r *rng) appendString(b []byte, maxLen int64, special byte) []byte {
	start := len(b)
	for n := 3 + r.intn(maxLen-3); n > 0; n-- {
		if r.intn(13) == 0 {
			b = append(b, special)
		} else {
			b = append(b, byte('a'+r.intn(26)))
		}
	}
	if special != ' ' {
		return b
	}
	s := b[start:]
	i, j := 0, len(s)
	for i < j && s[i] == ' ' {
		i++
	}
	for j > i && s[j-1] == ' ' {
		j--
	}
	n := copy(b[start:], s[i:j])
	return b[:start+n]
}
