package expr

import (
	"encoding/json"
	"math"
	"sort"
	"strconv"

	"github.com/flinkgo/flinkgo/pkg/runtime/jsonstring"
)

// AppendValue appends the bytes a record value gets from an expression
// result: strings and byte slices as they are, numbers and booleans in
// their text form, maps and lists as JSON (keys sorted).
func AppendValue(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case string:
		return append(dst, x...), nil
	case []byte:
		return append(dst, x...), nil
	default:
		return AppendJSON(dst, v)
	}
}

func AppendJSON(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case bool:
		return strconv.AppendBool(dst, x), nil
	case int:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(dst, x, 10), nil
	case int32:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case uint64:
		return strconv.AppendUint(dst, x, 10), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return append(dst, "null"...), nil
		}
		return appendFloat(dst, x), nil
	case string:
		return jsonstring.Append(dst, x), nil
	case map[string]any:
		var small [8]string // most records have few fields: no allocation
		keys := small[:0]
		for k := range x {
			keys = append(keys, k)
		}
		sortStrings(keys)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = jsonstring.Append(dst, k)
			dst = append(dst, ':')
			var err error
			if dst, err = AppendJSON(dst, x[k]); err != nil {
				return dst, err
			}
		}
		return append(dst, '}'), nil
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = AppendJSON(dst, e); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	}
	b, err := json.Marshal(v)
	return append(dst, b...), err
}

// sortStrings sorts few strings in place without allocating (insertion
// sort), many with sort.Strings.
func sortStrings(s []string) {
	if len(s) > 12 {
		sort.Strings(s)
		return
	}
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}
