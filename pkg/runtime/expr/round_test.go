package expr

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// round(x, n) is SQL's ROUND: a DECIMAL(23, 3) product such as Nexmark
// q1's 0.908 * price reads as the decimal, not the float product.
func TestRoundToPlaces(t *testing.T) {
	for _, c := range []struct {
		src, rec, want string
	}{
		{`round(0.908 * price, 3)`, `{"price": 15}`, `13.62`},
		{`0.908 * price`, `{"price": 15}`, `13.620000000000001`},
		{`round(2.5)`, `{}`, `3`},
		{`round(-2.5)`, `{}`, `-3`},
		{`round(x, 2)`, `{"x": 1.005}`, `1`}, // 1.005 is 1.00499999999999989... as a float
		{`round(x, 1)`, `{"x": -0.25}`, `-0.3`},
		{`round(x, -2)`, `{"x": 1250}`, `1300`},
		{`round(x, 3)`, `{"x": 12}`, `12`},
		{`round(x, 3)`, `{"x": 1e300}`, `1e+300`},
		{`{a: round(x / 3, 4)}`, `{"x": 10}`, `{"a":3.3333}`},
	} {
		p, err := Compile(c.src, Any)
		require.NoError(t, err, c.src)
		got, err := p.AppendValue(nil, &runtime.Record{Value: []byte(c.rec)})
		require.NoError(t, err, c.src)
		require.Equal(t, c.want, string(got), "%s over %s", c.src, c.rec)
	}
	// Every Nexmark price: 0.908 × p to 3 places is p × 908 / 1000 exactly.
	for p := int64(1); p < 2_000_000; p += 7 {
		got := strconv.FormatFloat(roundTo(0.908*float64(p), 3), 'f', -1, 64)
		want := strconv.FormatFloat(float64(p*908)/1000, 'f', -1, 64)
		require.Equal(t, want, got, p)
	}
	for _, c := range []struct{ src, err string }{
		{`round(1, 2, 3)`, "round takes a number and its decimal places, got 3 arguments"},
		{`round(x, 16)`, "round's places must be a whole number from -15 to 15, got 16"},
		{`round(x, -16)`, "round's places must be a whole number from -15 to 15, got -16"},
		{`round(x, 1.5)`, "cannot use float64 as argument (type int) to call round"},
		{`round("a")`, "cannot use string as argument (type float64) to call round"},
	} {
		_, err := Compile(c.src, Any)
		require.ErrorContains(t, err, c.err, "%s: refused at submit", c.src)
		_, err = CompileRowExpr(strings.ReplaceAll(c.src, "x", "left.x"), Any, []string{"left"})
		require.ErrorContains(t, err, c.err, "%s: refused at submit in a join", c.src)
	}
	// Places computed per record are checked per record.
	p, err := Compile(`round(x, n)`, Any)
	require.NoError(t, err)
	_, err = p.Eval(&runtime.Record{Value: []byte(`{"x": 1, "n": 16}`)})
	require.ErrorContains(t, err, "round's places must be a whole number from -15 to 15, got 16")
	require.True(t, math.IsNaN(roundTo(math.NaN(), 2)))
}
