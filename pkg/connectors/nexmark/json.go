package nexmark

import (
	"strconv"

	"github.com/flinkgo/flinkgo/pkg/internal/itoa"
)

// The JSON form of an event, which the source emits: one flat object whose
// first member is its event_type (0 person, 1 auction, 2 bid, as in the
// Nexmark table of Flink), then the fields of its kind with Nexmark's
// names, times in ms since the epoch:
//
//	{"event_type":0,"id":1000,"name":"Peter Shultz","emailAddress":"…","creditCard":"…","city":"Bend","state":"OR","dateTime":…,"extra":"…"}
//	{"event_type":1,"id":1000,"itemName":"…","description":"…","initialBid":…,"reserve":…,"dateTime":…,"expires":…,"seller":…,"category":10,"extra":"…"}
//	{"event_type":2,"auction":1000,"bidder":1001,"price":…,"channel":"Google","url":"…","dateTime":…,"extra":"…"}
//
// Every string the generator makes is letters, digits, spaces and url
// punctuation: nothing needs escaping.

// MaxLen bounds the JSON length of an event of g.
func (g *Generator) MaxLen() int {
	maxURL := g.maxChanURL // bounded by the longest channel and url together
	pad := int(max(g.c.AvgPersonSize, g.c.AvgAuctionSize, g.c.AvgBidSize))*6/5 + 2
	return 256 + bufLen + maxURL + pad + 10*20
}

// AppendJSON appends e's JSON form. It keeps the digits of e's time in e
// (appendTime), so it writes to e: an Event is not for goroutines to share.
func AppendJSON(b []byte, e *Event) []byte {
	switch e.Kind {
	case KindPerson:
		p := &e.Person
		b = itoa.AppendInt(append(b, `{"event_type":0,"id":`...), p.ID)
		b = appendStr(b, `,"name":"`, p.Name)
		b = appendStr(b, `","emailAddress":"`, p.Email)
		b = appendStr(b, `","creditCard":"`, p.CreditCard)
		b = appendStr(b, `","city":"`, p.City)
		b = appendStr(b, `","state":"`, p.State)
		b = e.appendTime(append(b, `","dateTime":`...))
		b = appendStr(b, `,"extra":"`, p.Extra)
	case KindAuction:
		a := &e.Auction
		b = itoa.AppendInt(append(b, `{"event_type":1,"id":`...), a.ID)
		b = appendStr(b, `,"itemName":"`, a.ItemName)
		b = appendStr(b, `","description":"`, a.Description)
		b = itoa.AppendInt(append(b, `","initialBid":`...), a.InitialBid)
		b = itoa.AppendInt(append(b, `,"reserve":`...), a.Reserve)
		b = e.appendTime(append(b, `,"dateTime":`...))
		b = itoa.AppendInt(append(b, `,"expires":`...), a.Expires)
		b = itoa.AppendInt(append(b, `,"seller":`...), a.Seller)
		b = itoa.AppendInt(append(b, `,"category":`...), a.Category)
		b = appendStr(b, `,"extra":"`, a.Extra)
	default:
		d := &e.Bid
		b = itoa.AppendInt(append(b, `{"event_type":2,"auction":`...), d.Auction)
		b = itoa.AppendInt(append(b, `,"bidder":`...), d.Bidder)
		b = itoa.AppendInt(append(b, `,"price":`...), d.Price)
		if d.tableChannel() {
			b = appendStr(b, `,"channel":"`, d.chanURL)
		} else {
			b = appendStr(b, `,"channel":"`, d.Channel)
			b = appendStr(b, urlSep, d.URL)
		}
		b = e.appendTime(append(b, `","dateTime":`...))
		b = appendStr(b, `,"extra":"`, d.Extra)
	}
	return append(b, `"}`...)
}

// appendTime appends e.DateTime in decimal. Consecutive events mostly
// share their millisecond (ten thousand of them at the published event
// rate), so the digits of the last one are kept in the Event: formatting a
// 13-digit time was a third of formatting an event's integers.
func (e *Event) appendTime(b []byte) []byte {
	if e.timeLen == 0 || e.timeOf != e.DateTime {
		e.timeOf, e.timeLen = e.DateTime, len(strconv.AppendInt(e.timeText[:0], e.DateTime, 10))
	}
	return append(b, e.timeText[:e.timeLen]...)
}

// tableChannel reports whether Channel and URL are still the parts of
// chanURL the generator set (a caller may have replaced them).
func (d *Bid) tableChannel() bool {
	n := d.chanN
	return n > 0 && len(d.Channel) == n && len(d.URL) > 0 && len(d.chanURL) == n+len(urlSep)+len(d.URL) &&
		&d.Channel[0] == &d.chanURL[0] && &d.URL[0] == &d.chanURL[n+len(urlSep)]
}

func appendStr(b []byte, prefix string, s []byte) []byte { return append(append(b, prefix...), s...) }
