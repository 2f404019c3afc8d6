package nexmark

import (
	"math"
	"math/bits"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

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

// Each channel of the table and its url, written from their slot, are the
// strings drawn for them: the draws of the table as a whole, of which the
// slots keep only what differs.
func TestChannelsAreTheDrawnOnes(t *testing.T) {
	for _, seed := range []int64{0, 1, 42} {
		c := DefaultConfig()
		c.Seed = seed
		g, err := New(c)
		require.NoError(t, err)
		r := rng{s: mix64(g.seed ^ 0x6e65786d61726b)}
		for i := range hotChannelNames {
			u := baseURL(&r)
			require.Equal(t, hotChannelNames[i]+urlSep+string(u), string(g.hotText[g.hotOff[i]:g.hotOff[i+1]]))
		}
		withID := 0
		for i := range int64(numChannels) {
			u := baseURL(&r)
			if r.intn(10) > 0 {
				u = strconv.AppendInt(append(u, "&channel_id="...), abs32(int32(bits.Reverse32(uint32(i)))), 10)
				withID++
			}
			want := "channel-" + strconv.FormatInt(i, 10)
			got, n := g.appendChannel([]byte("x"), i)
			require.Equal(t, "x"+want+urlSep+string(u), string(got), i)
			require.Equal(t, len(want), n)
			require.LessOrEqual(t, len(got)-1, g.maxChanURL)
		}
		require.InDelta(t, numChannels*9/10, withID, 300, "9 in 10 urls name their channel")
	}
}

// priceOf is exactPrice, faster: every u, including those whose price is
// near a half of a cent.
func TestPriceIsExact(t *testing.T) {
	r := rng{s: 7}
	for range 2_000_000 {
		// Compared without require.Equal, whose reflection took most of
		// the test's time over two million draws.
		if u := r.float(); exactPrice(u) != priceOf(u) {
			t.Fatalf("price of %v: %v, exactly %v", u, priceOf(u), exactPrice(u))
		}
	}
	// Prices at a half, to the last bit: the boundary path.
	for _, cents := range []float64{100.5, 48785823.5, 999.5, 1234567.5} {
		u := math.Log10(cents/100) / 6
		for k := -3; k <= 3; k++ {
			v := u + float64(k)*1e-17
			require.Equal(t, exactPrice(v), priceOf(v), v)
		}
	}
	require.Equal(t, exactPrice(0), priceOf(0))
	require.Equal(t, exactPrice(math.Nextafter(1, 0)), priceOf(math.Nextafter(1, 0)))
}
