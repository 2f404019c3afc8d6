package expr

import "testing"

// BenchmarkAppendJSONStrings is AppendJSON of the strings a window key,
// a Nexmark output and a user's text hold: plain ASCII short and long,
// one with a quote, one with non-ASCII letters.
func BenchmarkAppendJSONStrings(b *testing.B) {
	strs := map[string]string{
		"key":    "user-1234",
		"extra":  "mamsqurzlrppjhzlpxnfijaipkiheafwniislokudnurgpkgerqkjrdtwftokpgggmxqzme",
		"quote":  `she said "hi" and left`,
		"utf8":   "café olé, crème brûlée",
		"object": "",
	}
	obj := map[string]any{"auction": 1000, "channel": "Apple", "url": "https://www.nexmark.com/ramx/nux/jkc/item.htm?query=1"}
	for name, s := range strs {
		b.Run(name, func(b *testing.B) {
			var dst []byte
			for i := 0; i < b.N; i++ {
				if name == "object" {
					dst, _ = AppendJSON(dst[:0], obj)
				} else {
					dst, _ = AppendJSON(dst[:0], s)
				}
			}
		})
	}
}
