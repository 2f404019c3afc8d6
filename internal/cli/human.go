package cli

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// human writes a value of a snapshot's details (decoded JSON: maps,
// lists, numbers, strings) for a reader, not as Go syntax: a map as
// "k1: v1, k2: v2" in key order ("flink-test/0: 9130"), a list as
// "a, b", nested ones in braces and brackets, whole numbers without
// exponent.
func human(v any) string {
	var b strings.Builder
	writeHuman(&b, v, false)
	return b.String()
}

func writeHuman(b *strings.Builder, v any, nested bool) {
	switch v := v.(type) {
	case nil:
		b.WriteString("none")
	case map[string]any:
		if len(v) == 0 {
			b.WriteString("none")
			return
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if nested {
			b.WriteByte('{')
		}
		for i, k := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(k)
			b.WriteString(": ")
			writeHuman(b, v[k], true)
		}
		if nested {
			b.WriteByte('}')
		}
	case []any:
		if len(v) == 0 {
			b.WriteString("none")
			return
		}
		if nested {
			b.WriteByte('[')
		}
		for i, x := range v {
			if i > 0 {
				b.WriteString(", ")
			}
			writeHuman(b, x, true)
		}
		if nested {
			b.WriteByte(']')
		}
	case float64:
		b.WriteString(strconv.FormatFloat(v, 'f', -1, 64))
	case string:
		b.WriteString(v)
	default:
		// Anything else (details not yet decoded from JSON): through JSON,
		// so it reads like the rest.
		raw, err := json.Marshal(v)
		if err != nil {
			fmt.Fprint(b, v)
			return
		}
		var back any
		if json.Unmarshal(raw, &back) != nil {
			b.Write(raw)
			return
		}
		if _, same := back.(map[string]any); same || isList(back) {
			writeHuman(b, back, nested)
			return
		}
		b.WriteString(strings.Trim(string(raw), `"`))
	}
}

func isList(v any) bool { _, ok := v.([]any); return ok }
