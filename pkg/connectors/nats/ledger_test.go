package nats

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLedgerScript replays scripts of ledger operations. Each step is
// "emit a b" (delivered in generation 0, or "gen G" first), "snap N",
// "complete N" (want: acked), "abort N" (want: returned), "drain" (want:
// returned), "len" (want: count), "old G" (want: kept alive at G).
func TestLedgerScript(t *testing.T) {
	type step struct{ op, want string }
	for name, script := range map[string][]step{
		"covered by the checkpoint after their emission": {
			{"emit a b", ""}, {"snap 1", ""}, {"emit c", ""},
			{"complete 1", "a b"}, {"len", "1"}, {"complete 1", ""},
			{"snap 2", ""}, {"complete 2", "c"}, {"len", "0"},
		},
		"a savepoint is acked by the next completed checkpoint": {
			{"emit a", ""}, {"snap 1", ""}, // intermediate savepoint: never completes
			{"emit b", ""}, {"snap 2", ""},
			{"complete 2", "a b"},
		},
		"concurrent checkpoints complete in order": {
			{"emit a", ""}, {"snap 1", ""}, {"emit b", ""}, {"snap 2", ""}, {"emit c", ""}, {"snap 3", ""},
			{"complete 2", "a b"}, {"complete 3", "c"},
		},
		"an aborted checkpoint returns only its own messages": {
			{"emit a", ""}, {"snap 1", ""}, {"emit b", ""}, {"snap 2", ""}, {"emit c", ""},
			{"abort 1", "a"}, {"abort 1", ""}, {"len", "2"}, {"complete 2", "b"}, {"drain", "c"},
		},
		"keepalives cover the lists with old messages": {
			{"emit a", ""}, {"snap 1", ""}, {"gen 1", ""}, {"emit b", ""}, {"snap 2", ""}, {"gen 2", ""}, {"emit c", ""},
			{"old 0", "a"}, {"old 1", "a b"}, {"old 2", "a b c"}, {"complete 1", "a"}, {"old 1", "b"},
		},
		"empty snapshots are no covers": {
			{"snap 1", ""}, {"complete 1", ""}, {"emit a", ""}, {"abort 5", ""}, {"len", "1"},
		},
		"close returns everything not acked": {
			{"emit a", ""}, {"snap 1", ""}, {"emit b", ""}, {"snap 2", ""}, {"emit c", ""},
			{"complete 1", "a"}, {"drain", "b c"}, {"len", "0"}, {"drain", ""},
		},
	} {
		t.Run(name, func(t *testing.T) {
			var l ledger
			var gen int64
			for i, s := range script {
				f := strings.Fields(s.op)
				var got []string
				switch f[0] {
				case "emit":
					for _, r := range f[1:] {
						l.emit(r, gen)
					}
					continue
				case "gen":
					gen = atoi(t, f[1])
					continue
				case "old":
					got = l.appendOld(nil, atoi(t, f[1]))
				case "snap":
					l.snapshot(atoi(t, f[1]))
					continue
				case "complete":
					got = l.complete(atoi(t, f[1])).list
				case "abort":
					got = l.abort(atoi(t, f[1]))
				case "drain":
					got = l.drain()
				case "len":
					require.Equal(t, s.want, itoa(l.len()), "step %d %q", i, s.op)
					require.Len(t, l.appendOld(nil, 1<<62), l.len(), "step %d: every list is old at the end of time", i)
					continue
				}
				require.Equal(t, s.want, strings.Join(got, " "), "step %d %q", i, s.op)
			}
		})
	}
}

func atoi(t *testing.T, s string) int64 {
	var n int64
	for _, c := range s {
		require.True(t, c >= '0' && c <= '9', s)
		n = n*10 + int64(c-'0')
	}
	return n
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

func TestParseReply(t *testing.T) {
	for _, tc := range []struct {
		reply string
		want  ackInfo
		ok    bool
	}{
		{"$JS.ACK.orders.d.1.42.40.1700000000123456789.7", ackInfo{streamSeq: 42, timestamp: 1700000000123456789, pending: 7}, true},
		{"$JS.ACK._.HASH.orders.d.3.42.40.1700000000123456789.0.abc", ackInfo{streamSeq: 42, timestamp: 1700000000123456789}, true},
		{"$JS.ACK.dom.HASH.orders.d.3.42.40.1700000000123456789.9", ackInfo{streamSeq: 42, timestamp: 1700000000123456789, pending: 9}, true},
		{"$JS.ACK.orders.d.1.x.40.17.7", ackInfo{}, false},
		{"$JS.ACK.orders.d.1.2.3", ackInfo{}, false},
		{"_INBOX.abc", ackInfo{}, false},
		{"", ackInfo{}, false},
	} {
		got, ok := parseReply(tc.reply)
		require.Equal(t, tc.ok, ok, tc.reply)
		require.Equal(t, tc.want, got, tc.reply)
	}
}

func TestValidSubject(t *testing.T) {
	for s, want := range map[string][2]bool{ // {as filter, as publish subject}
		"a": {true, true}, "a.b.c": {true, true}, "a.*": {true, false}, "a.>": {true, false},
		">": {true, false}, "a.>.b": {false, false}, "a..b": {false, false}, "a b": {false, false},
		"a*": {false, false}, "": {false, false}, ".a": {false, false},
	} {
		require.Equal(t, want[0], validSubject(s, true), "filter %q", s)
		require.Equal(t, want[1], validSubject(s, false), "subject %q", s)
	}
}

func TestPositionRoundTrip(t *testing.T) {
	for _, p := range []position{{stream: "s", next: 1}, {stream: "orders", next: 1 << 40}} {
		got, err := decodePosition(p.encode())
		require.NoError(t, err)
		require.Equal(t, p, got)
	}
	_, err := decodePosition([]byte{9, 1})
	require.ErrorContains(t, err, "format version 9")
	_, err = decodePosition([]byte{positionVersion})
	require.ErrorContains(t, err, "corrupt")
	// Version 1 (snapshots before the state encoder): the stream runs to
	// the end of the item.
	v1 := append(binary.AppendVarint(binary.AppendUvarint([]byte{1}, 3001), 0), "orders"...)
	got, err := decodePosition(v1)
	require.NoError(t, err)
	require.Equal(t, position{stream: "orders", next: 3001}, got)
}

func TestPublisherRoundTripAndLegacy(t *testing.T) {
	p := publisher{subtask: 2, seq: 1 << 33}
	got, err := decodePublisher(p.encode(), false)
	require.NoError(t, err)
	require.Equal(t, p, got)
	legacy := binary.AppendUvarint(binary.AppendUvarint(nil, 2), 1<<33)
	got, err = decodePublisher(legacy, true)
	require.NoError(t, err)
	require.Equal(t, p, got)
	_, err = decodePublisher(append(legacy, 0), true)
	require.ErrorContains(t, err, "trailing")
}
