package expr

import (
	"fmt"
	"math"
	"time"
)

// Millis reads an expression's result as an event time: a number of
// milliseconds since the epoch, an RFC 3339 string, or a time (a source's
// eventTime.timestamp, a join's timestamp).
func Millis(v any) (int64, error) {
	switch x := v.(type) {
	case int:
		return int64(x), nil
	case int64:
		return x, nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) || x > 9e18 || x < -9e18 {
			return 0, fmt.Errorf("gave %v, not a time in milliseconds", x)
		}
		return int64(x), nil
	case string:
		t, err := time.Parse(time.RFC3339Nano, x)
		if err != nil {
			return 0, fmt.Errorf("gave %q, neither a number of milliseconds nor an RFC 3339 time", x)
		}
		return t.UnixMilli(), nil
	case time.Time:
		return x.UnixMilli(), nil
	case nil:
		return 0, fmt.Errorf("gave nothing (a missing field?)")
	}
	return 0, fmt.Errorf("gave %v (%T), not a time", v, v)
}
