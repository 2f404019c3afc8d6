package window

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// A window result is valid JSON whatever bytes its key holds: a key with
// a quote or a newline and a byte that is not UTF-8 used to be written
// as it was (invalid JSON); now the byte becomes U+FFFD, as
// encoding/json writes it, and a valid key reads back as it is.
func TestWindowKeyIsAlwaysValidJSON(t *testing.T) {
	a, err := newAssigner(Tumbling, 1000, 0, 0, 0)
	require.NoError(t, err)
	h := newHarness(t, countConfig(t, a, 0, false), "chooser", nil, 0, 1)
	keys := map[string]string{"k\xff\"\n": "k\uFFFD\"\n", "é\"\\\t": "é\"\\\t", "plain": "plain"}
	for k := range keys {
		h.rec(t, k, 500)
	}
	h.watermark(t, 1000)
	got := h.take()
	require.Len(t, got, len(keys))
	var read []string
	for _, out := range got {
		require.True(t, json.Valid([]byte(out)), "%q", out)
		var r struct{ Key string }
		require.NoError(t, json.Unmarshal([]byte(out), &r))
		read = append(read, r.Key)
	}
	var want []string
	for _, k := range keys {
		want = append(want, k)
	}
	require.ElementsMatch(t, want, read)
}
