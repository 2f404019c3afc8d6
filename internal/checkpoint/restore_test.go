package checkpoint

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRestoreScripts replays testdata/restore/*.txt against DecideRestore, in the
// format of scriptreplay_test.go, like the coordinator's scripts. Each
// block is one decision:
//
//	decide [recorded=P] [initial=P] [retained=P,...] [disk=P,...] [next=N] [unreadable=P,...] [legacy]
//
// A snapshot P is written chk-<n> (a periodic checkpoint in /chk),
// final-<n> (a final checkpoint in /chk), stop-<n> (a stop-with-savepoint
// in /sp) or sp-<n> (a savepoint in /sp). The loads Decide asks for succeed
// except for the unreadable ones. The output is each load asked for, then
// the decision:
//
//	try chk-3
//	load chk-2 passed=chk-3 retained=[2 3] next=5 discard=chk-4
//	fresh retained=[] next=1
//	refuse passed=chk-3 reason="..."
func TestRestoreScripts(t *testing.T) {
	replayScripts(t, "testdata/restore/*.txt", func(t *testing.T, file string) func(line int, cmd string) string {
		return func(line int, cmd string) string { return decideScript(t, fmt.Sprintf("%s:%d", file, line), cmd) }
	})
}

var errUnreadable = errors.New("unreadable")

func decideScript(t *testing.T, where, line string) string {
	fields := strings.Fields(line)
	if fields[0] != "decide" {
		t.Fatalf("%s: unknown command %q", where, fields[0])
	}
	point := func(tok string) Point {
		name, n, ok := strings.Cut(tok, "-")
		id, err := strconv.ParseInt(n, 10, 64)
		kind := map[string]Kind{"chk": Periodic, "final": Final, "stop": StopSavepoint, "sp": Savepoint}[name]
		if !ok || err != nil || kind == 0 {
			t.Fatalf("%s: bad snapshot %q", where, tok)
		}
		dir := "/chk/chk-" + n
		if kind.IsSavepoint() {
			dir = "/sp/" + tok
		}
		return Point{ID: id, Kind: kind, Dir: dir}
	}
	points := func(v string) []Point {
		var out []Point
		for _, tok := range strings.Split(v, ",") {
			out = append(out, point(tok))
		}
		return out
	}
	f := RestoreFacts{Tried: map[string]error{}}
	unreadable := map[string]bool{}
	for _, fl := range fields[1:] {
		k, v, _ := strings.Cut(fl, "=")
		switch k {
		case "recorded":
			p := point(v)
			f.Recorded = &p
		case "initial":
			p := point(v)
			f.Initial = &p
		case "retained":
			f.Retained = points(v)
		case "disk":
			f.OnDisk = points(v)
		case "next":
			n, err := strconv.ParseInt(v, 10, 64)
			require.NoError(t, err, where)
			f.NextID = n
		case "unreadable":
			for _, p := range points(v) {
				unreadable[p.Dir] = true
			}
		case "legacy":
			f.Legacy = true
		case "lost":
			n, err := strconv.ParseInt(v, 10, 64)
			require.NoError(t, err, where)
			f.LostFrom = n
		default:
			t.Fatalf("%s: unknown key %q", where, k)
		}
	}
	var out []string
	for range 100 {
		d := DecideRestore(f)
		if d.Action != RestoreTry {
			return strings.Join(append(out, printDecision(d)), "\n")
		}
		out = append(out, "try "+token(d.Point))
		if _, again := f.Tried[d.Point.Dir]; again {
			t.Fatalf("%s: %s tried twice", where, d.Point.Dir)
		}
		f.Tried[d.Point.Dir] = nil
		if unreadable[d.Point.Dir] {
			f.Tried[d.Point.Dir] = errUnreadable
		}
	}
	t.Fatalf("%s: no decision after 100 loads", where)
	return ""
}

func token(p Point) string {
	switch p.Kind {
	case Periodic:
		return "chk-" + strconv.FormatInt(p.ID, 10)
	case Final:
		return "final-" + strconv.FormatInt(p.ID, 10)
	case StopSavepoint:
		return "stop-" + strconv.FormatInt(p.ID, 10)
	}
	return "sp-" + strconv.FormatInt(p.ID, 10)
}

func tokens(ps []Point) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = token(p)
	}
	return strings.Join(s, ",")
}

func printDecision(d RestoreDecision) string {
	var passed []Point
	for _, u := range d.Passed {
		passed = append(passed, u.Point)
	}
	out := d.Action.String()
	if d.Action == RestoreLoad {
		out += " " + token(d.Point)
	}
	if len(passed) > 0 {
		out += " passed=" + tokens(passed)
	}
	if d.Action == RestoreRefuse {
		return out + fmt.Sprintf(" reason=%q", d.Reason)
	}
	out += fmt.Sprintf(" retained=%v next=%d", d.Retained, d.NextID)
	if len(d.Discard) > 0 {
		out += " discard=" + tokens(d.Discard)
	}
	return out
}
