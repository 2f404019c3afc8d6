package expr

import (
	"fmt"
	"math"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
)

// roundFunc replaces expr's builtin round. round(x) is as before: the
// nearest integer, halves away from zero, as a float. round(x, n) rounds
// to n decimal places (-15 to 15; negative rounds to tens, hundreds, ...),
// as SQL's ROUND, and as a DECIMAL(p, n) result reads: 0.908 * 15 is
// the float 13.620000000000001 where Flink's SQL computes the DECIMAL
// 13.620; round(0.908 * 15, 3) is 13.62. (It also writes faster:
// a short decimal skips strconv's shortest search, see appendFloat.)
var roundFunc = expr.Function("round", func(args ...any) (any, error) {
	if len(args) > 2 {
		return nil, fmt.Errorf("round takes a number and its decimal places, got %d arguments", len(args))
	}
	x, ok := Number(args[0])
	if !ok {
		return nil, fmt.Errorf("round takes a number, got %v", args[0])
	}
	n := 0
	if len(args) == 2 {
		if n, ok = places(args[1]); !ok {
			return nil, fmt.Errorf("round's places must be a whole number from -15 to 15, got %v", args[1])
		}
	}
	return roundTo(x, n), nil
}, new(func(float64, ...int) float64))

// checkRound reports a call of round the checker lets through that can
// never run: more than two arguments, or constant places out of range.
func checkRound(node ast.Node) (err error) {
	ast.Walk(&node, visitor(func(n *ast.Node) {
		c, ok := (*n).(*ast.CallNode)
		if !ok || err != nil {
			return
		}
		if id, ok := c.Callee.(*ast.IdentifierNode); !ok || id.Value != "round" {
			return
		}
		if len(c.Arguments) > 2 {
			err = fmt.Errorf("round takes a number and its decimal places, got %d arguments", len(c.Arguments))
			return
		}
		if len(c.Arguments) == 2 {
			if lit, ok := c.Arguments[1].(*ast.IntegerNode); ok && (lit.Value < -15 || lit.Value > 15) {
				err = fmt.Errorf("round's places must be a whole number from -15 to 15, got %d", lit.Value)
			}
		}
	}))
	return err
}

// roundTo is x rounded to n decimal places (|n| <= 15), halves away from
// zero: the float nearest x × 10^n rounded, over 10^n. A float too large
// for a fraction at that scale is already round.
func roundTo(x float64, n int) float64 {
	switch {
	case n == 0:
		return math.Round(x)
	case math.IsNaN(x) || math.IsInf(x, 0):
		return x
	case n > 0:
		p := pow10f15[n]
		y := x * p
		if math.Abs(y) >= 1<<52 {
			return x
		}
		return math.Round(y) / p
	}
	p := pow10f15[-n]
	return math.Round(x/p) * p
}

// pow10f15[n] is 10^n, exact.
var pow10f15 = [16]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// Number is v as a float64 when it is one of the numbers evaluation gives
// (int, int64, float64).
func Number(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

func places(v any) (int, bool) {
	switch x := v.(type) {
	case int:
		return x, x >= -15 && x <= 15
	case int64:
		return int(x), x >= -15 && x <= 15
	case float64:
		return int(x), x == math.Trunc(x) && x >= -15 && x <= 15
	}
	return 0, false
}

// roundNative is round for the native evaluator: x's value rounded to n
// places, n a constant; anything but a number goes to the VM.
func roundNative(x nexpr, n int) nexpr {
	return func(c *nctx) (nval, bool) {
		v, ok := x(c)
		if !ok || !numeric(v) {
			return nval{}, false
		}
		return floatVal(roundTo(asFloat(v), n)), true
	}
}
