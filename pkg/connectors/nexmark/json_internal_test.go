package nexmark

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// appendInt writes what strconv writes, in place or not.
func TestAppendIntIsStrconvs(t *testing.T) {
	vals := []int64{0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 12345, math.MaxInt64, math.MinInt64, -1, -10, 1 << 53}
	for p := int64(1); p > 0 && p < math.MaxInt64/10; p *= 10 {
		vals = append(vals, p-1, p, p+1, 2*p, 9*p+p-1)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		vals = append(vals, r.Int64N(1<<uint(1+r.IntN(62))))
	}
	for _, v := range vals {
		want := strconv.AppendInt([]byte("x"), v, 10)
		require.Equal(t, string(want), string(appendInt([]byte("x"), v)), "no room: %d", v)
		require.Equal(t, string(want), string(appendInt(append(make([]byte, 0, 32), 'x'), v)), "in place: %d", v)
	}
}

// A bid's channel and url are copied from the generator's table in one
// piece only while they are still the table's.
func TestBidChannelReplacedIsWritten(t *testing.T) {
	g, err := New(DefaultConfig())
	require.NoError(t, err)
	var e Event
	n := int64(0)
	for ; g.KindOf(n) != KindBid; n++ {
	}
	g.Next(n, &e)
	require.True(t, e.Bid.tableChannel())
	url := string(e.Bid.URL)
	whole := string(AppendJSON(nil, &e))
	require.Contains(t, whole, `"channel":"`+string(e.Bid.Channel)+`","url":"`+url+`","dateTime":`)
	e.Bid.Channel = []byte("elsewhere")
	require.False(t, e.Bid.tableChannel())
	require.Contains(t, string(AppendJSON(nil, &e)), `"channel":"elsewhere","url":"`+url+`","dateTime":`)
	e.Bid.Channel, e.Bid.URL = e.Bid.chanURL[:3], e.Bid.chanURL[3+len(urlSep):]
	require.False(t, e.Bid.tableChannel(), "a shorter channel out of the same bytes")
}
