package nats

import "strings"

// ackInfo is what a JetStream message's ack reply subject tells about it.
type ackInfo struct {
	streamSeq uint64
	timestamp int64  // nanoseconds since the epoch, when the stream stored it
	pending   uint64 // messages left for the consumer after this one
}

// parseReply reads an ack reply subject without allocating:
//
//	$JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<tm>.<pending>            (v1, 9 tokens)
//	$JS.ACK.<domain>.<hash>.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<tm>.<pending>[.<token>] (v2, 11+)
func parseReply(reply string) (ackInfo, bool) {
	if !strings.HasPrefix(reply, "$JS.ACK.") {
		return ackInfo{}, false
	}
	n := strings.Count(reply, ".") + 1
	skip := 0 // tokens before <delivered>
	switch {
	case n == 9:
		skip = 4
	case n >= 11:
		skip = 6
	default:
		return ackInfo{}, false
	}
	rest := reply
	for range skip + 1 { // also past <delivered>
		_, rest, _ = strings.Cut(rest, ".")
	}
	var tok [4]string // sseq, cseq, tm, pending
	for i := range tok {
		tok[i], rest, _ = strings.Cut(rest, ".")
	}
	seq, ok1 := parseUint(tok[0])
	ts, ok2 := parseUint(tok[2])
	pending, ok3 := parseUint(tok[3])
	if !ok1 || !ok2 || !ok3 {
		return ackInfo{}, false
	}
	return ackInfo{streamSeq: seq, timestamp: int64(ts), pending: pending}, true
}

func parseUint(s string) (uint64, bool) {
	if s == "" || len(s) > 19 {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, true
}
