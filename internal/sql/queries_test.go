// Package sql_test runs SQL scripts end to end in-process: planned, compiled
// and run as ordinary jobs, their output compared with the hand-written
// YAML spec of the same query and with references computed here.
package sql_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/connectors/all"
	"github.com/flinkgo/flinkgo/pkg/connectors/nexmark"
)

// A small run: 4,000 events (3,680 bids) over 5 s of event time, at
// parallelism 2 so that keyed edges shuffle.
const (
	events    = 4_000
	eventRate = 800
)

var (
	jobParallelism = regexp.MustCompile(`(?m)^parallelism: 1$`)
	discardSink    = regexp.MustCompile(`type: discard`)
)

// collecting makes spec's job parallelism 2 and its discard sink a collector.
func collecting(t *testing.T, spec, name string) string {
	t.Helper()
	require.Regexp(t, jobParallelism, spec)
	spec = jobParallelism.ReplaceAllString(spec, "parallelism: 2")
	require.Regexp(t, discardSink, spec)
	return discardSink.ReplaceAllString(spec, "type: test-collect, name: "+name)
}

func yamlSpec(t *testing.T, q string) string { return yamlSpecAt(t, q, eventRate) }

// yamlSpecAt is the YAML spec of q over the test's events at rate events
// per second of event time.
func yamlSpecAt(t *testing.T, q string, rate int) string {
	b, err := os.ReadFile(filepath.Join("..", "..", "configs", "jobs", "nexmark", q+".yaml"))
	require.NoError(t, err)
	s := string(b)
	for old, repl := range map[string]string{"events: 10000000": fmt.Sprintf("events: %d", events),
		"eventRate: 10000000": fmt.Sprintf("eventRate: %d", rate)} {
		require.Contains(t, s, old)
		s = strings.Replace(s, old, repl, 1)
	}
	return s
}

// sqlSpec plans script (the nexmark table's size and rate set for the
// test) as flinkgo run job.sql plans it.
func sqlSpec(t *testing.T, script string) string { return sqlSpecAt(t, script, eventRate) }

func sqlSpecAt(t *testing.T, script string, rate int) string {
	for old, repl := range map[string]string{"'events.num' = '10000000'": fmt.Sprintf("'events.num' = '%d'", events),
		"'first-event.rate' = '10000000'": fmt.Sprintf("'first-event.rate' = '%d'", rate),
		"'next-event.rate' = '10000000'":  fmt.Sprintf("'next-event.rate' = '%d'", rate)} {
		require.Contains(t, script, old)
		script = strings.Replace(script, old, repl, 1)
	}
	p, err := engine.PlanSQL("job.sql", []byte(script))
	require.NoError(t, err)
	return p.Spec
}

func sqlScript(t *testing.T, q string) string {
	b, err := os.ReadFile(filepath.Join("..", "..", "configs", "jobs", "nexmark-sql", q+".sql"))
	require.NoError(t, err)
	return string(b)
}

// run runs spec to its end and returns its results, each as canonical
// JSON (sorted keys, encoding/json's numbers), sorted.
func run(t *testing.T, spec string) []string {
	t.Helper()
	name := runtimetest.UniqueName(t)
	j := runtimetest.Start(t, collecting(t, spec, name), runtimetest.Options{Types: all.Definitions(), CheckpointsDir: t.TempDir()})
	require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 2*time.Minute), j.Info().Error)
	var out []string
	for _, v := range runtimetest.Values(name) {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(v), &m), v)
		b, err := json.Marshal(m)
		require.NoError(t, err)
		out = append(out, string(b))
	}
	sort.Strings(out)
	return out
}

func canon(rows []map[string]any) []string {
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		b, _ := json.Marshal(r)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		b, _ = json.Marshal(m)
		out = append(out, string(b))
	}
	sort.Strings(out)
	return out
}

func bids(t *testing.T) []nexmark.Event { return generated(t, eventRate, nexmark.KindBid) }

// generated are the test's events of kind at rate events per second of
// event time, as the nexmark source makes them (their members copied).
func generated(t *testing.T, rate int, kind nexmark.Kind) []nexmark.Event {
	c := nexmark.DefaultConfig()
	c.EventRate = int64(rate)
	g, err := nexmark.New(c)
	require.NoError(t, err)
	var out []nexmark.Event
	for i := int64(0); i < events; i++ {
		if e := g.At(i); e.Kind == kind {
			e.Person.Name = append([]byte(nil), e.Person.Name...)
			out = append(out, e)
		}
	}
	return out
}

// The Nexmark queries as the benchmark writes them in SQL give what the
// hand-written YAML specs give, on the same events.
func TestSQLQueries(t *testing.T) {
	for _, q := range []string{"q0", "q1", "q2", "q11", "q5"} {
		t.Run(q, func(t *testing.T) {
			t.Parallel()
			want := run(t, yamlSpec(t, q))
			if q == "q11" {
				want = q11Rows(t, want)
			}
			got := run(t, sqlSpec(t, sqlScript(t, q)))
			require.NotEmpty(t, want)
			require.Equal(t, len(want), len(got), "results")
			require.Equal(t, want, got)
			if q == "q5" { // and an independent reference
				require.Equal(t, canon(q5Reference(bids(t))), got)
			}
			if q == "q2" { // and an independent reference
				var ref []map[string]any
				for _, e := range bids(t) {
					if e.Bid.Auction%123 == 0 {
						ref = append(ref, map[string]any{"auction": e.Bid.Auction, "price": e.Bid.Price})
					}
				}
				require.Equal(t, canon(ref), got)
			}
		})
	}
}

// The joins: q7 (an interval join of the bids to each window's highest
// price) and q8 (a window join of two window aggregations) as the
// benchmark publishes them give what their YAML specs give, and what a
// reference computed here gives. Their events span 20 s of event time
// (two 10 s windows and part of a third).
func TestSQLJoinQueries(t *testing.T) {
	const rate = 200
	for _, q := range []string{"q7", "q8"} {
		t.Run(q, func(t *testing.T) {
			t.Parallel()
			want := run(t, yamlSpecAt(t, q, rate))
			got := run(t, sqlSpecAt(t, sqlScript(t, q), rate))
			var ref []map[string]any
			switch q {
			case "q7":
				ref = q7Reference(generated(t, rate, nexmark.KindBid))
			case "q8":
				want = renamed(t, want, "starttime", "stime")
				ref = q8Reference(generated(t, rate, nexmark.KindPerson), generated(t, rate, nexmark.KindAuction))
			}
			require.NotEmpty(t, want)
			t.Logf("%s: %d rows", q, len(got))
			require.Equal(t, want, got)
			require.Equal(t, canon(ref), got)
		})
	}
}

// q5Reference: per 10 s window sliding by 2 s, the auctions with the
// most bids, and their count.
func q5Reference(bids []nexmark.Event) []map[string]any {
	counts := map[int64]map[int64]int64{} // window start → auction → bids
	for _, e := range bids {
		for s := e.DateTime - e.DateTime%2000; s > e.DateTime-10000; s -= 2000 {
			if counts[s] == nil {
				counts[s] = map[int64]int64{}
			}
			counts[s][e.Bid.Auction]++
		}
	}
	var out []map[string]any
	for _, byAuction := range counts {
		top := int64(0)
		for _, n := range byAuction {
			top = max(top, n)
		}
		for a, n := range byAuction {
			if n == top {
				out = append(out, map[string]any{"auction": a, "num": n})
			}
		}
	}
	return out
}

// q7Reference: the bids at their 10 s window's highest price, each one
// with every window whose end is at most 10 s after it (the published
// query's BETWEEN takes a bid at a window's very end into that window
// and the next).
func q7Reference(bids []nexmark.Event) []map[string]any {
	top := map[int64]int64{} // window end → highest price
	for _, e := range bids {
		end := e.DateTime - e.DateTime%10000 + 10000
		top[end] = max(top[end], e.Bid.Price)
	}
	var out []map[string]any
	for end, p := range top {
		for _, e := range bids {
			if e.Bid.Price == p && e.DateTime >= end-10000 && e.DateTime <= end {
				out = append(out, map[string]any{"auction": e.Bid.Auction, "bidder": e.Bid.Bidder, "price": e.Bid.Price,
					"dateTime": e.DateTime, "extra": string(e.Bid.Extra)})
			}
		}
	}
	return out
}

// q8Reference: the persons who created an auction in the 10 s window
// they registered in, once per window.
func q8Reference(persons, auctions []nexmark.Event) []map[string]any {
	sold := map[[2]int64]bool{} // seller, window start
	for _, e := range auctions {
		sold[[2]int64{e.Auction.Seller, e.DateTime - e.DateTime%10000}] = true
	}
	var out []map[string]any
	for _, e := range persons {
		w := e.DateTime - e.DateTime%10000
		if sold[[2]int64{e.Person.ID, w}] {
			out = append(out, map[string]any{"id": e.Person.ID, "name": string(e.Person.Name), "stime": w})
		}
	}
	return out
}

// renamed renames member from of each row to to.
func renamed(t *testing.T, rows []string, from, to string) []string {
	var out []map[string]any
	for _, r := range rows {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(r), &m))
		m[to] = m[from]
		delete(m, from)
		out = append(out, m)
	}
	return canon(out)
}

// q11Rows are the YAML q11's window results ({key, windowStart,
// windowEnd, bid_count}) as the SQL's sink columns name them.
func q11Rows(t *testing.T, rows []string) []string {
	var out []map[string]any
	for _, r := range rows {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(r), &m))
		bidder, err := strconv.ParseInt(m["key"].(string), 10, 64)
		require.NoError(t, err)
		out = append(out, map[string]any{"bidder": bidder, "bid_count": m["bid_count"], "starttime": m["windowStart"], "endtime": m["windowEnd"]})
	}
	return canon(out)
}

// A window aggregation in SQL (TUMBLE, GROUP BY key and window, COUNT,
// MAX, SUM, AVG, COUNT DISTINCT, HAVING) equals the reference computed
// here over the generator's bids.
func TestSQLWindowAggregate(t *testing.T) {
	script := sqlScript(t, "q0")
	script = script[:strings.Index(script, "-- Query 0")] + `
CREATE TABLE discard_sink (auction BIGINT, wstart TIMESTAMP(3), wend TIMESTAMP(3), num BIGINT, top BIGINT, total BIGINT, bidders BIGINT, mean BIGINT)
  WITH ('connector' = 'blackhole');
INSERT INTO discard_sink
SELECT auction, window_start, window_end, COUNT(*), MAX(price), SUM(price), COUNT(DISTINCT bidder), AVG(price)
FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '2' SECOND))
WHERE price > 100
GROUP BY auction, window_start, window_end
HAVING COUNT(*) >= 3;
`
	got := run(t, sqlSpec(t, script))
	type agg struct {
		n, top, total int64
		bidders       map[int64]bool
	}
	wins := map[[2]int64]*agg{}
	for _, e := range bids(t) {
		if e.Bid.Price <= 100 {
			continue
		}
		k := [2]int64{e.Bid.Auction, e.DateTime - e.DateTime%2000}
		a := wins[k]
		if a == nil {
			a = &agg{bidders: map[int64]bool{}}
			wins[k] = a
		}
		a.n++
		a.top = max(a.top, e.Bid.Price)
		a.total += e.Bid.Price
		a.bidders[e.Bid.Bidder] = true
	}
	var ref []map[string]any
	for k, a := range wins {
		if a.n >= 3 {
			ref = append(ref, map[string]any{"auction": k[0], "wstart": k[1], "wend": k[1] + 2000, "num": a.n,
				"top": a.top, "total": a.total, "bidders": len(a.bidders), "mean": a.total / a.n})
		}
	}
	require.NotEmpty(t, ref)
	require.Equal(t, canon(ref), got)
}

// HOP with two keys (one an expression): the keys come back through the
// window's aggregates, each window a record is in counts it.
func TestSQLHopTwoKeys(t *testing.T) {
	script := sqlScript(t, "q0")
	script = script[:strings.Index(script, "-- Query 0")] + `
CREATE TABLE discard_sink (auction BIGINT, part BIGINT, wstart TIMESTAMP(3), num BIGINT)
  WITH ('connector' = 'blackhole');
INSERT INTO discard_sink
SELECT auction, MOD(bidder, 3) AS part, window_start, COUNT(*)
FROM TABLE(HOP(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '1' SECOND, INTERVAL '3' SECOND))
GROUP BY auction, MOD(bidder, 3), window_start, window_end;
`
	got := run(t, sqlSpec(t, script))
	counts := map[[3]int64]int64{}
	for _, e := range bids(t) {
		last := e.DateTime - e.DateTime%1000
		for start := last; start > e.DateTime-3000; start -= 1000 {
			counts[[3]int64{e.Bid.Auction, e.Bid.Bidder % 3, start}]++
		}
	}
	var ref []map[string]any
	for k, n := range counts {
		ref = append(ref, map[string]any{"auction": k[0], "part": k[1], "wstart": k[2], "num": n})
	}
	require.Equal(t, canon(ref), got)
}

// A window over a window: window_time, selected in a view's aggregation,
// is its results' time attribute, and a TUMBLE over the view cascades.
func TestSQLCascadingWindows(t *testing.T) {
	script := sqlScript(t, "q0")
	script = script[:strings.Index(script, "-- Query 0")] + `
CREATE VIEW per_second AS
SELECT auction, COUNT(*) AS num, window_time AS wt
FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '1' SECOND))
GROUP BY auction, window_start, window_end;
CREATE TABLE discard_sink (wstart TIMESTAMP(3), top BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO discard_sink
SELECT window_start, MAX(num)
FROM TABLE(TUMBLE(TABLE per_second, DESCRIPTOR(wt), INTERVAL '2' SECOND))
GROUP BY window_start, window_end;
`
	got := run(t, sqlSpec(t, script))
	perSecond := map[[2]int64]int64{}
	for _, e := range bids(t) {
		perSecond[[2]int64{e.Bid.Auction, e.DateTime - e.DateTime%1000}]++
	}
	top := map[int64]int64{}
	for k, n := range perSecond {
		w := k[1] - k[1]%2000
		top[w] = max(top[w], n)
	}
	var ref []map[string]any
	for w, n := range top {
		ref = append(ref, map[string]any{"wstart": w, "top": n})
	}
	require.Equal(t, canon(ref), got)
}

// The SESSION window table function (Flink 1.19's, PARTITION BY the key)
// gives what q11's legacy GROUP BY SESSION(…) gives.
func TestSQLSessionTVF(t *testing.T) {
	script := sqlScript(t, "q11")
	legacy := run(t, sqlSpec(t, script))
	script = script[:strings.Index(script, "INSERT INTO discard_sink")] + `
INSERT INTO discard_sink
SELECT bidder, COUNT(*), window_start, window_end
FROM TABLE(SESSION(TABLE bid PARTITION BY bidder, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))
GROUP BY bidder, window_start, window_end;
`
	got := run(t, sqlSpec(t, script))
	require.NotEmpty(t, legacy)
	require.Equal(t, legacy, got)
}

// An interval join with strict and non-strict bounds written as
// comparisons, a filter on one input (pushed before the join), a
// condition over both (the join's where), an input column that is an
// expression (the input gets a map naming it) and an unqualified column
// only one input has, against a reference over the generator's events.
func TestSQLIntervalJoin(t *testing.T) {
	t.Parallel()
	const rate = 200
	script := sqlScript(t, "q0")
	script = script[:strings.Index(script, "-- Query 0")] + `
CREATE VIEW cheap AS SELECT auction, bidder, price * 2 AS dbl, dateTime FROM bid WHERE price < 5000000;
CREATE TABLE discard_sink (id BIGINT, bidder BIGINT, dbl BIGINT, gap BIGINT, seller BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO discard_sink
SELECT A.id, C.bidder, C.dbl, C.dbl - A.initialBid AS gap, seller
FROM auction A JOIN cheap C ON A.id = C.auction AND C.dateTime >= A.dateTime AND C.dateTime < A.dateTime + INTERVAL '2' SECOND
WHERE A.category <> 10 AND C.dbl > A.initialBid;
`
	spec := sqlSpecAt(t, script, rate)
	require.Contains(t, spec, "type: intervalJoin")
	require.Contains(t, spec, "lower: 0ms, upper: 1999ms")
	got := run(t, spec)
	var ref []map[string]any
	bs := generated(t, rate, nexmark.KindBid)
	for _, a := range generated(t, rate, nexmark.KindAuction) {
		if a.Auction.Category == 10 {
			continue
		}
		for _, b := range bs {
			dbl := 2 * b.Bid.Price
			if b.Bid.Auction == a.Auction.ID && b.Bid.Price < 5000000 && b.DateTime >= a.DateTime && b.DateTime < a.DateTime+2000 && dbl > a.Auction.InitialBid {
				ref = append(ref, map[string]any{"id": a.Auction.ID, "bidder": b.Bid.Bidder, "dbl": dbl, "gap": dbl - a.Auction.InitialBid, "seller": a.Auction.Seller})
			}
		}
	}
	require.NotEmpty(t, ref)
	require.Equal(t, canon(ref), got)
}

// A window join of two HOP aggregations (10 s windows every 5 s): each
// pair of results meets in the one window both came from, though the
// windows overlap.
func TestSQLWindowJoinHop(t *testing.T) {
	t.Parallel()
	const rate = 200
	script := sqlScript(t, "q0")
	script = script[:strings.Index(script, "-- Query 0")] + `
CREATE TABLE discard_sink (id BIGINT, name VARCHAR, auctions BIGINT, wstart TIMESTAMP(3), wend TIMESTAMP(3)) WITH ('connector' = 'blackhole');
INSERT INTO discard_sink
SELECT P.id, P.name, A.n, A.window_start, P.window_end
FROM (SELECT id, name, window_start, window_end
      FROM TABLE(HOP(TABLE person, DESCRIPTOR(dateTime), INTERVAL '5' SECOND, INTERVAL '10' SECOND))
      GROUP BY id, name, window_start, window_end) P
JOIN (SELECT seller, COUNT(*) AS n, window_start, window_end
      FROM TABLE(HOP(TABLE auction, DESCRIPTOR(dateTime), INTERVAL '5' SECOND, INTERVAL '10' SECOND))
      GROUP BY seller, window_start, window_end) A
ON P.id = A.seller AND P.window_start = A.window_start AND P.window_end = A.window_end;
`
	spec := sqlSpecAt(t, script, rate)
	require.Contains(t, spec, "type: windowJoin")
	got := run(t, spec)
	sold := map[[2]int64]int64{} // seller, window start → auctions
	for _, e := range generated(t, rate, nexmark.KindAuction) {
		for s := e.DateTime - e.DateTime%5000; s > e.DateTime-10000; s -= 5000 {
			sold[[2]int64{e.Auction.Seller, s}]++
		}
	}
	var ref []map[string]any
	for _, e := range generated(t, rate, nexmark.KindPerson) {
		for s := e.DateTime - e.DateTime%5000; s > e.DateTime-10000; s -= 5000 {
			if n := sold[[2]int64{e.Person.ID, s}]; n > 0 {
				ref = append(ref, map[string]any{"id": e.Person.ID, "name": string(e.Person.Name), "auctions": n, "wstart": s, "wend": s + 10000})
			}
		}
	}
	require.NotEmpty(t, ref)
	require.Equal(t, canon(ref), got)
}

// q5, q7 and q8 as SQL into exactly-once files: a savepoint while windows are
// open and bids are held (after some results were committed), cancel, and the same script run from it at
// another parallelism (as flinkgo stop, then run -s, of the script): the
// operators, named after the statement's tables and aliases, take their
// state back, and the files hold the reference's rows, each once.
func TestSQLJoinSavepointRestore(t *testing.T) {
	t.Parallel() // mostly waits on the paced source: beside the others
	const rate = 200
	for _, q := range []string{"q5", "q7", "q8"} {
		t.Run(q, func(t *testing.T) {
			t.Parallel()
			out, sp, chk := t.TempDir(), t.TempDir(), t.TempDir()
			script := func(par int) string {
				s := strings.Replace(sqlScript(t, q), "'bid.proportion' = '46'", "'bid.proportion' = '46', 'rate' = '3000'", 1)
				s = strings.Replace(s, "'connector' = 'blackhole'", fmt.Sprintf("'connector' = 'filesystem', 'path' = '%s', 'format' = 'json'", out), 1)
				s = strings.Replace(s, "SET 'execution.checkpointing.interval' = '10s';", fmt.Sprintf("SET 'execution.checkpointing.interval' = '50ms';\nSET 'parallelism.default' = '%d';", par), 1)
				return sqlSpecAt(t, s, rate)
			}
			j := runtimetest.Start(t, script(2), runtimetest.Options{Types: all.Definitions(), CheckpointsDir: chk, SavepointsDir: sp})
			runtimetest.WaitCheckpoint(t, 20*time.Second, j)
			// Past the first window's end (half the events): results are
			// committed before the savepoint, and more windows are open.
			runtimetest.WaitUntil(t, 20*time.Second, "55% of the events", func() bool { return j.Info().Operators[0].RecordsOut >= events*55/100 })
			path, _, err := j.Savepoint("")
			require.NoError(t, err)
			runtimetest.Cancel(t, 20*time.Second, j)
			j = runtimetest.Start(t, script(3), runtimetest.Options{Types: all.Definitions(), CheckpointsDir: chk, Restore: path})
			require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, time.Minute), j.Info().Error)
			require.Less(t, j.Info().Operators[0].RecordsOut, int64(events), "the restored source starts where the savepoint was")
			var ref []map[string]any
			switch q {
			case "q5":
				ref = q5Reference(generated(t, rate, nexmark.KindBid))
			case "q7":
				ref = q7Reference(generated(t, rate, nexmark.KindBid))
			default:
				ref = q8Reference(generated(t, rate, nexmark.KindPerson), generated(t, rate, nexmark.KindAuction))
			}
			var got []map[string]any
			for _, l := range runtimetest.FinishedLines(t, out) {
				var m map[string]any
				require.NoError(t, json.Unmarshal([]byte(l), &m), l)
				got = append(got, m)
			}
			require.Equal(t, canon(ref), canon(got))
		})
	}
}

// A LEFT interval join: every auction, with the bids over 1,000 in its
// first second, or alone (the bid's columns NULL) when it has none. The
// ON condition over the auction alone decides matches (an auction of
// another category matches nothing but is kept); the WHERE over the
// auction alone filters auctions.
func TestSQLLeftIntervalJoin(t *testing.T) {
	t.Parallel()
	const rate = 200
	script := sqlScript(t, "q0")
	script = script[:strings.Index(script, "-- Query 0")] + `
CREATE TABLE discard_sink (id BIGINT, bidder BIGINT, price BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO discard_sink
SELECT A.id, B.bidder, B.price
FROM auction A LEFT JOIN bid B ON A.id = B.auction AND A.category = 10 AND B.price > 1000
  AND B.dateTime BETWEEN A.dateTime AND A.dateTime + INTERVAL '1' SECOND
WHERE A.reserve > 2000;
`
	spec := sqlSpecAt(t, script, rate)
	require.Contains(t, spec, "how: left")
	got := run(t, spec)
	var ref []map[string]any
	bs := generated(t, rate, nexmark.KindBid)
	for _, a := range generated(t, rate, nexmark.KindAuction) {
		if a.Auction.Reserve <= 2000 {
			continue
		}
		n := 0
		for _, b := range bs {
			if a.Auction.Category == 10 && b.Bid.Auction == a.Auction.ID && b.Bid.Price > 1000 && b.DateTime >= a.DateTime && b.DateTime <= a.DateTime+1000 {
				ref = append(ref, map[string]any{"id": a.Auction.ID, "bidder": b.Bid.Bidder, "price": b.Bid.Price})
				n++
			}
		}
		if n == 0 {
			ref = append(ref, map[string]any{"id": a.Auction.ID, "bidder": nil, "price": nil})
		}
	}
	require.Equal(t, canon(ref), got)
	require.Contains(t, strings.Join(got, "\n"), `"bidder":null`)
	require.Contains(t, strings.Join(got, "\n"), `"bidder":1`)
}

// A FULL window join of q8's two aggregations: a window's persons who
// sold nothing in it and its sellers who did not register in it come out
// with the other input's columns NULL.
func TestSQLOuterWindowJoin(t *testing.T) {
	t.Parallel()
	const rate = 200
	persons, auctions := generated(t, rate, nexmark.KindPerson), generated(t, rate, nexmark.KindAuction)
	for _, kind := range []string{"FULL"} { // (LEFT is a subset of its results)
		t.Run(kind, func(t *testing.T) {
			script := sqlScript(t, "q8")
			script = script[:strings.Index(script, "CREATE TABLE nexmark_q8")] + `
CREATE TABLE discard_sink (id BIGINT, seller BIGINT, n BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO discard_sink
SELECT P.id, A.seller, A.n
FROM (SELECT id, window_start, window_end FROM TABLE(TUMBLE(TABLE person, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))
      GROUP BY id, window_start, window_end) P
` + kind + ` JOIN (SELECT seller, COUNT(*) AS n, window_start, window_end FROM TABLE(TUMBLE(TABLE auction, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))
      GROUP BY seller, window_start, window_end) A
ON P.id = A.seller AND P.window_start = A.window_start AND P.window_end = A.window_end;
`
			got := run(t, sqlSpecAt(t, script, rate))
			sold := map[[2]int64]int64{}
			for _, e := range auctions {
				sold[[2]int64{e.Auction.Seller, e.DateTime - e.DateTime%10000}]++
			}
			registered := map[[2]int64]bool{}
			var ref []map[string]any
			for _, e := range persons {
				k := [2]int64{e.Person.ID, e.DateTime - e.DateTime%10000}
				registered[k] = true
				if n := sold[k]; n > 0 {
					ref = append(ref, map[string]any{"id": e.Person.ID, "seller": e.Person.ID, "n": n})
				} else {
					ref = append(ref, map[string]any{"id": e.Person.ID, "seller": nil, "n": nil})
				}
			}
			if kind == "FULL" {
				for k, n := range sold {
					if !registered[k] {
						ref = append(ref, map[string]any{"id": nil, "seller": k[0], "n": n})
					}
				}
			}
			require.Equal(t, canon(ref), got)
		})
	}
}

// Flink's window join of two window table functions' rows (its
// documentation's form): each person paired with each auction they
// created in the same window, for HOP (a row in each of its windows) and
// TUMBLE with FULL (the unmatched of both too, with NULLs, and COALESCE
// of the windows' starts).
func TestSQLWindowJoinOfTableFunctions(t *testing.T) {
	t.Parallel()
	const rate = 200
	persons, auctions := generated(t, rate, nexmark.KindPerson), generated(t, rate, nexmark.KindAuction)
	for _, c := range []struct{ name, tvf, kind string }{
		{"hop", "HOP(TABLE %s, DESCRIPTOR(dateTime), INTERVAL '5' SECOND, INTERVAL '10' SECOND)", "INNER"},
		{"tumble-full", "TUMBLE(TABLE %s, DESCRIPTOR(dateTime), INTERVAL '10' SECOND)", "FULL"},
	} {
		t.Run(c.name, func(t *testing.T) {
			script := sqlScript(t, "q8")
			script = script[:strings.Index(script, "CREATE TABLE nexmark_q8")] + `
CREATE TABLE discard_sink (pid BIGINT, aid BIGINT, wstart TIMESTAMP(3), wend TIMESTAMP(3)) WITH ('connector' = 'blackhole');
INSERT INTO discard_sink
SELECT P.id, A.id, COALESCE(P.window_start, A.window_start), A.window_end
FROM (SELECT * FROM TABLE(` + fmt.Sprintf(c.tvf, "person") + `)) P
` + c.kind + ` JOIN (SELECT id, seller, window_start, window_end FROM TABLE(` + fmt.Sprintf(c.tvf, "auction") + `)) A
ON P.id = A.seller AND P.window_start = A.window_start AND P.window_end = A.window_end;
`
			spec := sqlSpecAt(t, script, rate)
			require.Contains(t, spec, "type: windowJoin")
			got := run(t, spec)
			slide, size := int64(10000), int64(10000)
			if c.name == "hop" {
				slide = 5000
			}
			windows := func(ts int64) (starts []int64) {
				for s := ts - ts%slide; s > ts-size; s -= slide {
					starts = append(starts, s)
				}
				return starts
			}
			type key struct{ id, start int64 }
			sold := map[key][]int64{}
			for _, e := range auctions {
				for _, s := range windows(e.DateTime) {
					k := key{e.Auction.Seller, s}
					sold[k] = append(sold[k], e.Auction.ID)
				}
			}
			seen := map[key]bool{}
			var ref []map[string]any
			for _, e := range persons {
				for _, s := range windows(e.DateTime) {
					k := key{e.Person.ID, s}
					seen[k] = true
					for _, a := range sold[k] {
						ref = append(ref, map[string]any{"pid": e.Person.ID, "aid": a, "wstart": s, "wend": s + size})
					}
					if len(sold[k]) == 0 && c.kind == "FULL" {
						ref = append(ref, map[string]any{"pid": e.Person.ID, "aid": nil, "wstart": s, "wend": nil})
					}
				}
			}
			if c.kind == "FULL" {
				for k, as := range sold {
					if !seen[k] {
						for _, a := range as {
							ref = append(ref, map[string]any{"pid": nil, "aid": a, "wstart": k.start, "wend": k.start + size})
						}
					}
				}
			}
			require.NotEmpty(t, ref)
			require.Equal(t, canon(ref), got)
		})
	}
}

// An aggregation grouped by the window_start and window_end of a HOP
// aggregation's results (q5's MaxBids): per window, the most bids an
// auction had, with that window's own start and end.
func TestSQLWindowOverWindowResults(t *testing.T) {
	t.Parallel()
	script := sqlScript(t, "q0")
	script = script[:strings.Index(script, "-- Query 0")] + `
CREATE TABLE discard_sink (maxn BIGINT, s TIMESTAMP(3), e TIMESTAMP(3)) WITH ('connector' = 'blackhole');
INSERT INTO discard_sink
SELECT MAX(C.num), C.starttime, C.endtime
FROM (SELECT COUNT(*) AS num, window_start AS starttime, window_end AS endtime
      FROM TABLE(HOP(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
      GROUP BY auction, window_start, window_end) C
GROUP BY C.starttime, C.endtime;
`
	got := run(t, sqlSpec(t, script))
	counts := map[[2]int64]int64{} // window start, auction → bids
	for _, e := range bids(t) {
		for s := e.DateTime - e.DateTime%2000; s > e.DateTime-10000; s -= 2000 {
			counts[[2]int64{s, e.Bid.Auction}]++
		}
	}
	top := map[int64]int64{}
	for k, n := range counts {
		top[k[0]] = max(top[k[0]], n)
	}
	var ref []map[string]any
	for s, n := range top {
		ref = append(ref, map[string]any{"maxn": n, "s": s, "e": s + 10000})
	}
	require.Equal(t, canon(ref), got)
}
