package planner

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestGoldenErrors plans testdata/*.sql and compares every error, with its
// line:column, with the .golden file beside it.
func TestGoldenErrors(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.sql")
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Compile("bad", string(src))
		if err == nil {
			t.Fatalf("%s: planned without error", f)
		}
		got := err.Error() + "\n"
		golden := strings.TrimSuffix(f, ".sql") + ".golden"
		if *update {
			_ = os.WriteFile(golden, []byte(got), 0o644)
		}
		want, _ := os.ReadFile(golden)
		if got != string(want) {
			t.Errorf("%s:\n got:\n%s\nwant:\n%s", f, got, want)
		}
	}
}

const ddl = `
CREATE TABLE clicks (
  user_id BIGINT, url VARCHAR, price DOUBLE, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'clicks', 'properties.bootstrap.servers' = 'k1:9092,k2:9092',
        'properties.group.id' = 'g', 'scan.startup.mode' = 'earliest-offset', 'format' = 'json');
CREATE TABLE out (user_id BIGINT, n BIGINT, wend TIMESTAMP(3)) WITH ('connector' = 'filesystem', 'path' = '/tmp/out', 'format' = 'json');
CREATE TABLE shown (u VARCHAR, cheap BOOLEAN) WITH ('connector' = 'print');
`

const queries = `
INSERT INTO out SELECT user_id, COUNT(*) AS n, window_end FROM TABLE(HOP(TABLE clicks, DESCRIPTOR(ts), INTERVAL '1' MINUTE, INTERVAL '5' MINUTE))
  GROUP BY user_id, window_start, window_end;
INSERT INTO shown SELECT UPPER(url), CASE WHEN price < 10 THEN TRUE ELSE FALSE END FROM clicks WHERE url LIKE 'https://%' AND user_id IN (1, 2, 3);
`

// A script plans into the operators a hand-written spec would have, and
// their uids come from the tables, not from the statements' order.
func TestPlan(t *testing.T) {
	p, err := Compile("job", "SET 'parallelism.default' = '4';\nSET 'pipeline.name' = 'clicks';\n"+ddl+queries)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`name: "clicks"`, "parallelism: 4",
		`{uid: "clicks", type: kafka, brokers: ["k1:9092", "k2:9092"], format: json, topic: "clicks", groupId: "g", startingOffsets: earliest, eventTime: {timestamp: "ts", maxOutOfOrderness: 5000ms}}`,
		`{uid: "out.keyBy", type: keyBy, from: ["clicks"], expr: "user_id"}`,
		`{uid: "out.window", type: window, from: ["out.keyBy"], window: {type: sliding, size: 300000ms, slide: 60000ms}, aggregate: {agg0: "count()"}}`,
		`{uid: "out.project", type: map, from: ["out.window"], expr: "{user_id: int(key), n: agg0, wend: windowEnd}"}`,
		`{uid: "out", type: file, from: ["out.project"], path: "/tmp/out"}`,
		`{uid: "shown.where", type: filter, from: ["clicks"], expr: "((url startsWith \"https://\") && (user_id in [1, 2, 3]))"}`,
		`{uid: "shown.project", type: map, from: ["shown.where"], expr: "{u: upper(url), cheap: ((price < 10) ? true : false)}"}`,
		`{uid: "shown", type: print, from: ["shown.project"]}`,
	} {
		if !strings.Contains(p.Spec, want) {
			t.Errorf("spec lacks\n%s\n%s", want, p.Spec)
		}
	}
	// The same statements in another order: the same operators, by uid.
	q := strings.Split(strings.TrimSpace(queries), ";\n")
	p2, err := Compile("job", "SET 'parallelism.default' = '4';\nSET 'pipeline.name' = 'clicks';\n"+ddl+q[1]+";\n"+q[0])
	if err != nil {
		t.Fatal(err)
	}
	if uids(p.Spec) != uids(p2.Spec) {
		t.Errorf("uids changed with the order of statements:\n%s\n%s", uids(p.Spec), uids(p2.Spec))
	}
}

func uids(spec string) string {
	var out []string
	for _, l := range strings.Split(spec, "\n") {
		if i := strings.Index(l, "{uid: "); i >= 0 {
			out = append(out, l[i:strings.Index(l, ",")])
		}
	}
	sortStrings(out)
	return strings.Join(out, " ")
}

func sortStrings(s []string) {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
}

// TestExplainGoldens plans every shipped Nexmark script and compares the
// spec (what flinkgo explain prints) with testdata/explain/<q>.golden: a
// change to a plan, its operators or their uids (which a savepoint's state
// is restored by) shows in review.
func TestExplainGoldens(t *testing.T) {
	files, _ := filepath.Glob("../../../configs/jobs/nexmark-sql/*.sql")
	if len(files) == 0 {
		t.Fatal("no scripts")
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(f), ".sql")
		p, err := Compile(name, string(src))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		golden := filepath.Join("testdata", "explain", name+".golden")
		if *update {
			_ = os.MkdirAll(filepath.Dir(golden), 0o755)
			_ = os.WriteFile(golden, []byte(p.Spec), 0o644)
		}
		want, _ := os.ReadFile(golden)
		if p.Spec != string(want) {
			t.Errorf("%s: the plan differs from %s (go test -run TestExplainGoldens -update rewrites it):\n%s", f, golden, p.Spec)
		}
	}
}

// A join's t.* selects that input's columns; a condition over one input
// filters it; the uids are the sink's and the inputs' aliases'.
func TestJoinPlan(t *testing.T) {
	src := ddl + `
CREATE TABLE buys (user_id BIGINT, amount DOUBLE, at TIMESTAMP(3), WATERMARK FOR at AS at - INTERVAL '1' SECOND)
  WITH ('connector' = 'kafka', 'topic' = 'buys', 'properties.bootstrap.servers' = 'k:9092', 'format' = 'json');
CREATE TABLE j (user_id BIGINT, url VARCHAR, price DOUBLE, ts TIMESTAMP(3), amount DOUBLE) WITH ('connector' = 'print');
INSERT INTO j SELECT c.*, b.amount FROM clicks c JOIN buys b ON c.user_id = b.user_id AND b.at > c.ts AND b.at <= c.ts + INTERVAL '10' SECOND WHERE b.amount > 5;
`
	p, err := Compile("job", src)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`{uid: "j.b.where", type: filter, from: ["buys"], expr: "(amount > 5)"}`,
		`{uid: "j.join", type: intervalJoin, left: {from: "clicks", key: "user_id"}, right: {from: "j.b.where", key: "user_id"}, lower: 1ms, upper: 10000ms, ` +
			`select: {"user_id": "left.user_id", "url": "left.url", "price": "left.price", "ts": "left.ts", "amount": "right.amount"}}`,
		`{uid: "j", type: print, from: ["j.join"]}`,
	} {
		if !strings.Contains(p.Spec, want) {
			t.Errorf("spec lacks\n%s\n%s", want, p.Spec)
		}
	}
}

// q5's join keeps only each window's most-bid auctions (keepMax on the
// HOP window), which it may because nothing but the join and the maximum
// read that window and the join compares with that maximum alone; a
// filter on the counts before the join (HAVING) or any other condition
// leaves the window as written.
func TestKeepMaxOnlyWhenProvable(t *testing.T) {
	src, err := os.ReadFile("../../../configs/jobs/nexmark-sql/q5.sql")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile("q5", string(src))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Spec, "keepMax: agg0") {
		t.Errorf("q5 without keepMax:\n%s", p.Spec)
	}
	for _, change := range []string{
		"AuctionBids.num >= MaxBids.maxn AND AuctionBids.num > 3;",
		"AuctionBids.num + 1 >= MaxBids.maxn;",
		"AuctionBids.num >= MaxBids.maxn - 1;",
	} {
		q := strings.Replace(string(src), "AuctionBids.num >= MaxBids.maxn;", change, 1)
		p, err := Compile("q5", q)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(p.Spec, "keepMax") {
			t.Errorf("%s: keepMax where it changes the results:\n%s", change, p.Spec)
		}
	}
}
