package parser

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestGoldenErrors parses testdata/*.sql and compares every error, with its
// line:column, to the .golden file beside it: one bad statement does not
// hide the errors of the others.
func TestGoldenErrors(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.sql")
	if len(files) == 0 {
		t.Fatal("no testdata")
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		_, errs := Parse(string(src))
		got := errs.Error() + "\n"
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

func TestParseNexmarkShapes(t *testing.T) {
	src := `
-- comment
SET 'execution.checkpointing.interval' = '10s';
CREATE TABLE nexmark_table (
    event_type int,
    bid ROW<auction BIGINT, bidder BIGINT, price BIGINT, dateTime TIMESTAMP(3), extra VARCHAR>,
    dateTime AS CASE WHEN event_type = 0 THEN bid.dateTime ELSE bid.dateTime END,
    WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND
) WITH ('connector' = 'nexmark', 'events.num' = '100');
CREATE TEMPORARY VIEW bid AS SELECT bid.auction, bid.price, dateTime FROM nexmark_table WHERE event_type = 2;
/* block
   comment */
EXECUTE STATEMENT SET BEGIN
INSERT INTO s SELECT auction, 0.908 * price AS price FROM bid WHERE MOD(auction, 123) = 0 AND price NOT BETWEEN 1 AND 2;
INSERT INTO s2 SELECT auction, window_start, COUNT(*) AS n, COUNT(DISTINCT price)
  FROM TABLE(HOP(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
  GROUP BY auction, window_start, window_end HAVING COUNT(*) > 1;
END;
`
	s, errs := Parse(src)
	if errs != nil {
		t.Fatal(errs)
	}
	if len(s.Stmts) != 4 {
		t.Fatalf("%d statements, want 4", len(s.Stmts))
	}
	ct := s.Stmts[1].(*CreateTable)
	if ct.Name != "nexmark_table" || len(ct.Columns) != 3 || ct.Watermark == nil || ct.Columns[1].Type.Name != "ROW" || len(ct.Columns[1].Type.Fields) != 5 {
		t.Fatalf("create table: %+v", ct)
	}
	ss := s.Stmts[3].(*StatementSet)
	if len(ss.Inserts) != 2 {
		t.Fatalf("statement set: %d inserts", len(ss.Inserts))
	}
	w, ok := ss.Inserts[1].Query.From.(*WindowTVF)
	if !ok || w.Kind != "HOP" || w.Descriptor != "dateTime" || len(w.Args) != 2 {
		t.Fatalf("window: %+v", ss.Inserts[1].Query.From)
	}
	if ss.Inserts[1].Query.Having == nil || len(ss.Inserts[1].Query.GroupBy) != 3 {
		t.Fatal("group by / having")
	}
	if c := ss.Inserts[1].Query.Items[3].Expr.(*Call); !c.Distinct || c.Name != "COUNT" {
		t.Fatalf("count distinct: %+v", c)
	}
	if p := ss.Inserts[0].P; p.Line != 14 || p.Col != 1 {
		t.Fatalf("insert at %v, want 14:1", p)
	}
}

// Joins parse left-deep, with their kind and condition; t.* names its
// input.
func TestParseJoins(t *testing.T) {
	s, errs := Parse(`INSERT INTO o SELECT a.*, b.x FROM t a INNER JOIN u AS b ON a.k = b.k
  LEFT OUTER JOIN (SELECT k FROM v) c ON c.k = a.k FULL JOIN w ON w.k = a.k;`)
	if errs != nil {
		t.Fatal(errs)
	}
	q := s.Stmts[0].(*Insert).Query
	if q.Items[0].Of != "a" || q.Items[0].Expr != nil || q.Items[1].Of != "" {
		t.Fatalf("items: %+v", q.Items)
	}
	var kinds []string
	f := q.From
	for {
		j, ok := f.(*Join)
		if !ok {
			break
		}
		kinds = append(kinds, j.Kind)
		if j.On == nil {
			t.Fatalf("%s JOIN without its ON", j.Kind)
		}
		f = j.Left
	}
	if strings.Join(kinds, " ") != "FULL LEFT INNER" || f.(*TableName).Alias != "a" {
		t.Fatalf("joins %v over %+v", kinds, f)
	}
}
