package window

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAssignerScripts replays testdata/assigner/*.txt. Each line is a
// command and, after "=>", what it must print:
//
//	tumbling size=10 [offset=N] | sliding size=30 slide=10 | session gap=5
//	pane <ts>          => the pane's start
//	ends <ts>          => the ends of the windows holding ts's pane
//	panes <end>        => the pane starts of the window ending at end
//	last <end>         => the panes no window needs after the one ending at end
//	merge <start,end>... + <start,end>  => the merged session and the absorbed indices
func TestAssignerScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/assigner/*.txt")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			var a Assigner
			for n, line := range strings.Split(string(data), "\n") {
				line = strings.TrimSpace(line)
				if line == "" || strings.HasPrefix(line, "#") {
					continue
				}
				cmd, want, _ := strings.Cut(line, "=>")
				f := strings.Fields(cmd)
				var got string
				switch f[0] {
				case "tumbling", "sliding", "session":
					kv := map[string]int64{}
					for _, p := range f[1:] {
						k, v, _ := strings.Cut(p, "=")
						x, err := strconv.ParseInt(v, 10, 64)
						require.NoError(t, err, line)
						kv[k] = x
					}
					kind := map[string]Kind{"tumbling": Tumbling, "sliding": Sliding, "session": Session}[f[0]]
					a, err = newAssigner(kind, kv["size"], kv["slide"], kv["gap"], kv["offset"])
					if err != nil {
						got = "error: " + err.Error()
					} else {
						got = "ok"
					}
				case "pane":
					got = fmt.Sprint(a.PaneStart(num(t, f[1])))
				case "ends":
					first, last := a.WindowEnds(a.PaneStart(num(t, f[1])))
					var ends []string
					for e := first; e <= last; e += a.Step() {
						ends = append(ends, fmt.Sprint(e))
					}
					got = strings.Join(ends, " ")
				case "panes":
					first, last := a.PanesOf(num(t, f[1]))
					var ps []string
					for p := first; p <= last; p += a.Pane() {
						ps = append(ps, fmt.Sprint(p))
					}
					got = strings.Join(ps, " ")
				case "last":
					first, last := a.PanesEndingAt(num(t, f[1]))
					var ps []string
					for p := first; p <= last; p += a.Pane() {
						ps = append(ps, fmt.Sprint(p))
					}
					got = strings.Join(ps, " ")
				case "merge":
					var sessions []SessionWindow
					i := 1
					for ; f[i] != "+"; i++ {
						sessions = append(sessions, sessionArg(t, f[i]))
					}
					m, abs := MergeSessions(sessions, sessionArg(t, f[i+1]))
					got = fmt.Sprintf("%d,%d absorbed=%v", m.Start, m.End, abs)
				default:
					t.Fatalf("%s:%d: unknown command %q", f, n+1, f[0])
				}
				require.Equal(t, strings.TrimSpace(want), got, "%s:%d: %s", filepath.Base(t.Name()), n+1, line)
			}
		})
	}
}

func num(t *testing.T, s string) int64 {
	t.Helper()
	v, err := strconv.ParseInt(s, 10, 64)
	require.NoError(t, err)
	return v
}

func sessionArg(t *testing.T, s string) SessionWindow {
	t.Helper()
	a, b, _ := strings.Cut(s, ",")
	return SessionWindow{Start: num(t, a), End: num(t, b)}
}
