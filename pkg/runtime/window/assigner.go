package window

import "fmt"

// Kind is a window type.
type Kind uint8

const (
	Tumbling Kind = iota + 1
	Sliding
	Session
)

func (k Kind) String() string {
	switch k {
	case Tumbling:
		return "tumbling"
	case Sliding:
		return "sliding"
	case Session:
		return "session"
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// Assigner maps timestamps to windows. It is pure; times are milliseconds.
//
// Tumbling and sliding windows are cut into panes: a tumbling window is one
// pane; a sliding window of size S and slide L is made of S/P panes of width
// P = gcd(S, L), and each record goes into exactly one pane, so a record
// costs the same whatever S/L is (Flink copies it into S/L windows). A
// window [e-S, e) is the merge of the panes starting in [e-S, e-P]. Windows
// are aligned to the epoch plus Offset.
type Assigner struct {
	Kind   Kind
	Size   int64 // tumbling, sliding
	Slide  int64 // sliding
	Gap    int64 // session
	Offset int64
	pane   int64
}

// newAssigner returns a checked assigner (panes sized).
func newAssigner(k Kind, size, slide, gap, offset int64) (Assigner, error) {
	a := Assigner{Kind: k, Size: size, Slide: slide, Gap: gap, Offset: offset}
	switch k {
	case Tumbling:
		if size <= 0 {
			return a, fmt.Errorf("size must be more than 0")
		}
		a.pane = size
	case Sliding:
		if size <= 0 || slide <= 0 {
			return a, fmt.Errorf("size and slide must be more than 0")
		}
		if slide > size {
			return a, fmt.Errorf("slide %dms is larger than size %dms: records between windows would belong to none", slide, size)
		}
		a.pane = gcd(size, slide)
	case Session:
		if gap <= 0 {
			return a, fmt.Errorf("gap must be more than 0")
		}
	default:
		return a, fmt.Errorf("unknown window kind %d", k)
	}
	return a, nil
}

// Pane is the width of a pane (tumbling, sliding).
func (a Assigner) Pane() int64 { return a.pane }

// PaneStart is the start of the pane holding ts.
func (a Assigner) PaneStart(ts int64) int64 { return floorAlign(ts-a.Offset, a.pane) + a.Offset }

// WindowEnds returns the first and last end of the windows that hold the
// pane starting at p; the others lie between them, a slide apart.
func (a Assigner) WindowEnds(p int64) (first, last int64) {
	if a.Kind == Tumbling {
		return p + a.Size, p + a.Size
	}
	slide := a.Slide
	// Window starts s (aligned to slide) with s <= p and s + size >= p + pane.
	lastStart := floorAlign(p-a.Offset, slide) + a.Offset
	firstStart := ceilAlign(p+a.pane-a.Size-a.Offset, slide) + a.Offset
	return firstStart + a.Size, lastStart + a.Size
}

// IsWindowEnd reports whether a window ends at e (its start is aligned).
func (a Assigner) IsWindowEnd(e int64) bool {
	return floorAlign(e-a.Size-a.Offset, a.Step()) == e-a.Size-a.Offset
}

// Step is the distance between two consecutive window ends.
func (a Assigner) Step() int64 {
	if a.Kind == Sliding {
		return a.Slide
	}
	return a.Size
}

// The lateness rules of every window kind, in one place: a window (a
// session, or a pane through the last window it is in) ending at end fires
// when the watermark reaches end-1, and takes records until the watermark
// reaches cleanupAt(end, lateness), when its state goes.

// cleanupAt is the watermark at which the window ending at end is past its
// lateness.
func cleanupAt(end, lateness int64) int64 { return end - 1 + lateness }

// expired reports whether the pane whose last window ends at last (or the
// session ending at last) is past its lateness at watermark wm: it takes
// no more records (they are late) and is dropped.
func expired(last, wm, lateness int64) bool { return cleanupAt(last, lateness) <= wm }

// refires reports whether a record that lands in the window ending at e,
// at watermark wm, fires it again: the window fired (wm reached e-1) and
// its allowed lateness has not passed (Flink's isWindowLate: a window
// whose e-1+lateness the watermark reached takes no more records, so
// without lateness no window fires twice).
func refires(e, wm, lateness int64) bool { return e-1 <= wm && wm < cleanupAt(e, lateness) }

// PanesOf returns the first and last pane start of the window ending at end.
func (a Assigner) PanesOf(end int64) (first, last int64) {
	return end - a.Size, end - a.pane
}

// PanesEndingAt returns the first and last pane start of the panes whose
// last window ends at end (after it, no window needs them).
func (a Assigner) PanesEndingAt(end int64) (first, last int64) {
	return end - a.Size, end - a.Size + a.Step() - a.pane
}

// SessionWindow is a session [Start, End): End is the last record's time
// plus the gap.
type SessionWindow struct{ Start, End int64 }

// Intersects reports whether two sessions touch or overlap (they merge).
func (w SessionWindow) Intersects(o SessionWindow) bool { return w.Start <= o.End && o.Start <= w.End }

// MergeSessions merges the window of a new record (w) into a key's
// sessions: the result covers w and every session it intersects, which
// absorbed lists (by index into sessions). Merging is transitive: a record
// that bridges two sessions joins them.
func MergeSessions(sessions []SessionWindow, w SessionWindow) (merged SessionWindow, absorbed []int) {
	merged = w
	for changed := true; changed; {
		changed = false
		for i, s := range sessions {
			if contains(absorbed, i) || !s.Intersects(merged) {
				continue
			}
			merged.Start, merged.End = min(merged.Start, s.Start), max(merged.End, s.End)
			absorbed = append(absorbed, i)
			changed = true
		}
	}
	return merged, absorbed
}

func contains(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func floorAlign(x, m int64) int64 {
	r := x % m
	if r < 0 {
		r += m
	}
	return x - r
}

func ceilAlign(x, m int64) int64 {
	f := floorAlign(x, m)
	if f == x {
		return x
	}
	return f + m
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
