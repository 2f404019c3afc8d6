package engine_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// wmString renders a tracker step in the order the task applies it.
func wmString(s engine.WatermarkStep) string {
	var parts []string
	if s.Advanced {
		w := strconv.FormatInt(s.Watermark, 10)
		if s.Watermark == runtime.MaxWatermark {
			w = "max"
		}
		parts = append(parts, "advance="+w)
	}
	if s.Idle {
		parts = append(parts, "idle")
	}
	if s.Active {
		parts = append(parts, "active")
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

func wmApply(t *testing.T, tr *engine.WatermarkTracker, ev string) engine.WatermarkStep {
	t.Helper()
	f := strings.Fields(ev)
	ch, err := strconv.Atoi(f[1])
	require.NoError(t, err, ev)
	switch f[0] {
	case "wm":
		w := runtime.MaxWatermark
		if f[2] != "max" {
			w, err = strconv.ParseInt(f[2], 10, 64)
			require.NoError(t, err, ev)
		}
		return tr.OnWatermark(ch, w)
	case "idle":
		return tr.OnIdle(ch, true)
	case "active":
		return tr.OnIdle(ch, false)
	case "end":
		return tr.OnEnd(ch)
	}
	t.Fatalf("bad step %q", ev)
	return engine.WatermarkStep{}
}

func TestWatermarkTracker(t *testing.T) {
	for _, tc := range []struct {
		name     string
		channels int
		steps    [][2]string // event, expected step
		current  string      // Current() after the last step
		idle     bool
	}{
		{"single channel follows its watermarks, never back", 1, [][2]string{
			{"wm 0 10", "advance=10"}, {"wm 0 10", "-"}, {"wm 0 5", "-"}, {"wm 0 20", "advance=20"},
		}, "20", false},
		{"minimum over channels", 3, [][2]string{
			{"wm 0 10", "-"}, {"wm 1 20", "-"}, {"wm 2 5", "advance=5"}, {"wm 2 30", "advance=10"},
			{"wm 0 25", "advance=20"}, {"wm 1 40", "advance=25"},
		}, "25", false},
		{"an ended channel drops out", 2, [][2]string{
			{"wm 0 10", "-"}, {"end 1", "advance=10"}, {"wm 0 12", "advance=12"}, {"wm 1 99", "-"},
		}, "12", false},
		{"all ended: max", 2, [][2]string{
			{"wm 0 10", "-"}, {"end 0", "-"}, {"end 1", "advance=max"}, {"end 1", "-"},
		}, "max", false},
		{"an idle channel drops out until active", 2, [][2]string{
			{"wm 0 10", "-"}, {"wm 1 3", "advance=3"}, {"idle 1", "advance=10"}, {"wm 0 15", "advance=15"},
			// Back with a watermark behind: it counts once it catches up.
			{"active 1", "-"}, {"wm 0 16", "advance=16"}, {"wm 1 12", "-"}, {"wm 0 30", "advance=30"},
			{"wm 1 25", "-"}, {"wm 1 40", "-"}, {"wm 0 50", "advance=40"},
		}, "40", false},
		{"a watermark from an idle channel makes it active", 2, [][2]string{
			{"wm 0 10", "-"}, {"idle 1", "advance=10"}, {"wm 1 20", "-"}, {"wm 0 30", "advance=20"},
		}, "20", false},
		{"all idle: the subtask is idle and holds", 2, [][2]string{
			{"wm 0 10", "-"}, {"wm 1 7", "advance=7"}, {"idle 0", "-"}, {"idle 1", "idle"},
			{"idle 1", "-"}, {"wm 0 12", "advance=12 active"},
		}, "12", false},
		{"idle and ended: idle", 2, [][2]string{
			{"idle 0", "-"}, {"end 1", "idle"},
		}, "min", true},
		{"idle then the rest ends: max, not idle", 2, [][2]string{
			{"wm 0 5", "-"}, {"idle 0", "-"}, {"wm 1 8", "advance=8"}, {"end 1", "idle"}, {"end 0", "advance=max active"},
		}, "max", false},
		{"no channel yet: holds at min", 2, [][2]string{
			{"wm 0 10", "-"}, {"active 1", "-"},
		}, "min", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := engine.NewWatermarkTracker(tc.channels)
			for i, s := range tc.steps {
				got := wmString(wmApply(t, tr, s[0]))
				require.Equal(t, s[1], reorder(got, s[1]), "step %d %q", i, s[0])
			}
			cur := fmt.Sprint(tr.Current())
			switch tr.Current() {
			case runtime.MaxWatermark:
				cur = "max"
			case runtime.MinWatermark:
				cur = "min"
			}
			require.Equal(t, tc.current, cur)
			require.Equal(t, tc.idle, tr.Idle())
		})
	}
}

// reorder returns got with its words in want's order when both hold the
// same words (the step's fields have no order among themselves).
func reorder(got, want string) string {
	g, w := strings.Fields(got), strings.Fields(want)
	if len(g) != len(w) {
		return got
	}
	seen := map[string]int{}
	for _, x := range g {
		seen[x]++
	}
	for _, x := range w {
		if seen[x] == 0 {
			return got
		}
		seen[x]--
	}
	return want
}

// Every sequence of up to 5 events over 2 channels keeps the invariants:
// the watermark never goes back, it never exceeds the watermark of a live,
// active, caught-up channel, and it is max exactly when every channel ended.
func TestWatermarkTrackerInvariants(t *testing.T) {
	events := []string{"wm 0 1", "wm 0 5", "wm 1 3", "wm 1 7", "idle 0", "active 0", "idle 1", "active 1", "end 0", "end 1"}
	var walk func(seq []string)
	walk = func(seq []string) {
		tr := engine.NewWatermarkTracker(2)
		prev := tr.Current()
		ended := map[string]bool{}
		for _, ev := range seq {
			wmApply(t, tr, ev)
			if strings.HasPrefix(ev, "end") {
				ended[ev] = true
			}
			require.GreaterOrEqual(t, tr.Current(), prev, "%v", seq)
			prev = tr.Current()
		}
		require.Equal(t, len(ended) == 2, tr.Current() == runtime.MaxWatermark, "%v", seq)
		if len(seq) == 5 {
			return
		}
		for _, e := range events {
			walk(append(append([]string(nil), seq...), e))
		}
	}
	walk(nil)
}
