package nexmark_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/connectors/nexmark"
)

// The query tests run the job specs of configs/jobs/nexmark on a small
// deterministic input (the same generator, fewer events, a lower event
// rate so that windows close and sessions end, parallelism 2 so that every
// keyed edge is a shuffle) and compare what reaches the sink with the
// query computed here in plain Go over the generator's events. What a
// comparison needs is windows that close and sessions that end (event
// time), and results of every kind, not many of them: 50,000 events hold
// 46,000 bids, 3,000 auctions and 1,000 persons.
const (
	queryEvents    = 50_000
	queryEventRate = 2_500 // 20 s of event time: windows close, sessions end
)

var (
	jobParallelism = regexp.MustCompile(`(?m)^parallelism: 1$`)
	sinkLine       = regexp.MustCompile(`\{uid: out, type: discard,`)
)

// querySpec is configs/jobs/nexmark/<q>.yaml for the test: events and
// eventRate set, the job's parallelism 2, and its sink a collector.
func querySpec(t *testing.T, q, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "configs", "jobs", "nexmark", q+".yaml"))
	require.NoError(t, err)
	s := string(b)
	for old, repl := range map[string]string{"events: 10000000": fmt.Sprintf("events: %d", queryEvents),
		"eventRate: 10000000": fmt.Sprintf("eventRate: %d", queryEventRate)} {
		require.Contains(t, s, old)
		s = strings.Replace(s, old, repl, 1)
	}
	require.Regexp(t, jobParallelism, s)
	s = jobParallelism.ReplaceAllString(s, "parallelism: 2")
	require.Regexp(t, sinkLine, s)
	return sinkLine.ReplaceAllString(s, fmt.Sprintf("{uid: out, type: test-collect, name: %s,", name))
}

// runQuery runs query q and returns its results, canonical (see canon).
func runQuery(t *testing.T, q string) []string {
	t.Helper()
	name := runtimetest.UniqueName(t)
	j := runtimetest.Start(t, querySpec(t, q, name), runtimetest.Options{Types: testTypes, CheckpointsDir: t.TempDir()})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 3*time.Minute), j.Info().Error)
	var out []string
	for _, v := range runtimetest.Values(name) {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(v), &m), v)
		out = append(out, canon(m))
	}
	sort.Strings(out)
	return out
}

// canon is a result's JSON with sorted keys and encoding/json's numbers, so
// the job's output and the reference compare as values.
func canon(m map[string]any) string {
	for k, v := range m {
		switch x := v.(type) {
		case int64:
			m[k] = float64(x)
		case int:
			m[k] = float64(x)
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func sorted(rows []map[string]any) []string {
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		out = append(out, canon(r))
	}
	sort.Strings(out)
	return out
}

func requireResults(t *testing.T, want, got []string) {
	t.Helper()
	require.NotEmpty(t, want, "the reference has results")
	if len(want) != len(got) {
		t.Fatalf("%d results, want %d (first want %s)", len(got), len(want), want[0])
	}
	for i := range want {
		if want[i] != got[i] {
			t.Fatalf("result %d of %d: got %s, want %s", i, len(want), got[i], want[i])
		}
	}
	t.Logf("%d results equal the reference", len(got))
}

// input is the events of the query tests.
func input(t *testing.T) []nexmark.Event {
	c := nexmark.DefaultConfig()
	c.EventRate = queryEventRate
	g := newGen(t, c)
	out := make([]nexmark.Event, queryEvents)
	for i := range out {
		out[i] = g.At(int64(i))
	}
	return out
}

func TestQueries(t *testing.T) {
	evs := input(t)
	for _, q := range []struct {
		name string
		ref  func([]nexmark.Event) []map[string]any
		// final: compare the last update per key (running aggregates).
		final func(got []string) []string
	}{
		{name: "q0", ref: refQ0},
		{name: "q1", ref: refQ1},
		{name: "q2", ref: refQ2},
		{name: "q3", ref: refQ3},
		{name: "q4", ref: refQ4, final: lastPerCategory},
		{name: "q5", ref: refQ5},
		{name: "q7", ref: refQ7},
		{name: "q8", ref: refQ8},
		{name: "q11", ref: refQ11},
		{name: "q12", ref: refQ12, final: totalPerBidder},
	} {
		t.Run(q.name, func(t *testing.T) {
			t.Parallel() // evs is only read
			got := runQuery(t, q.name)
			if q.final != nil {
				got = q.final(got)
			}
			requireResults(t, sorted(q.ref(evs)), got)
		})
	}
}
