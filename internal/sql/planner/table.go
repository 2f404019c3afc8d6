package planner

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/flinkgo/flinkgo/internal/sql/parser"
)

// table is a CREATE TABLE: its columns over the connector's records, its
// time attribute, and the connector it maps to.
type table struct {
	name    string
	p       parser.Pos
	cols    []column
	nphys   int // the first nphys cols are physical
	rowtime string
	// watermark delay (ms) and the time attribute's expression.
	delay    int64
	timeExpr string
	conn     *connector
}

func (t *table) physical() []column { return t.cols[:t.nphys] }

// connector is a WITH clause mapped to a flinkgo source and/or sink type.
type connector struct {
	name                 string
	source, sink         bool
	sourceType, sinkType string
	srcOpts, sinkOpts    [][2]string
	// flatRows: ROW columns are the records' top-level members (nexmark).
	flatRows bool
	// with: flinkgo option → the WITH option it came from.
	with map[string]parser.Option
}

func (t *table) sourceOpts() [][2]string {
	opts := append([][2]string(nil), t.conn.srcOpts...)
	if t.rowtime != "" {
		et := fmt.Sprintf("{maxOutOfOrderness: %dms}", t.delay)
		if !(t.conn.flatRows && t.timeExpr == "dateTime") {
			// The nexmark source stamps each event with its dateTime;
			// other sources read the time attribute from the record.
			et = fmt.Sprintf("{timestamp: %s, maxOutOfOrderness: %dms}", quote(t.timeExpr), t.delay)
		}
		opts = append(opts, [2]string{"eventTime", et})
	}
	return opts
}

// reservedMembers always mean the record's payload, key and time in
// flinkgo expressions (docs/job-spec.md), so a column cannot be named so.
var reservedMembers = map[string]bool{"value": true, "key": true, "timestamp": true}

func (pl *planner) createTable(ct *parser.CreateTable) *table {
	t := &table{name: ct.Name, p: ct.P}
	t.conn = pl.connector(ct)
	seen := map[string]bool{}
	for _, c := range ct.Columns {
		if seen[c.Name] {
			pl.errorf(c.P, "column %s is declared twice", c.Name)
			continue
		}
		seen[c.Name] = true
		if c.Computed != nil {
			continue
		}
		if reservedMembers[c.Name] && t.conn != nil && t.conn.source {
			pl.errorf(c.P, "a column named %s cannot be read yet: flinkgo's expressions reserve the name for the record's own %s", c.Name, c.Name)
		}
		col, err := pl.physicalColumn(c, t.conn)
		if err != nil {
			pl.errorf(c.Type.P, "column %s: %v", c.Name, err)
			continue
		}
		t.cols = append(t.cols, col)
	}
	t.nphys = len(t.cols)
	sc := &scope{cols: t.cols}
	for _, c := range ct.Columns {
		if c.Computed == nil {
			continue
		}
		x, ty := pl.tr(c.Computed, sc)
		t.cols = append(t.cols, column{name: c.Name, t: ty, expr: x})
		sc.cols = t.cols
	}
	if w := ct.Watermark; w != nil {
		pl.watermark(t, w)
	}
	if t.conn == nil {
		t.conn = &connector{name: "?"}
	}
	return t
}

func (pl *planner) physicalColumn(c parser.Column, conn *connector) (column, error) {
	ty, err := typeOf(c.Type)
	if err != nil {
		return column{}, err
	}
	col := column{name: c.Name, t: ty, expr: member(c.Name)}
	if ty.k != kRow {
		return col, nil
	}
	col.fields = map[string]column{}
	for _, f := range c.Type.Fields {
		ft, err := typeOf(f.Type)
		if err != nil {
			return column{}, fmt.Errorf("field %s: %v", f.Name, err)
		}
		if ft.k == kRow {
			return column{}, fmt.Errorf("field %s: a ROW inside a ROW is not supported yet", f.Name)
		}
		x := col.expr + "?." + f.Name
		if conn != nil && conn.flatRows {
			x = member(f.Name)
		}
		col.fields[f.Name] = column{name: f.Name, t: ft, expr: x}
	}
	if conn != nil && conn.flatRows {
		col.expr = ""
	}
	return col, nil
}

// member is the expression reading a record's top-level member name.
func member(name string) string {
	if isIdent(name) {
		return name
	}
	return "$env[" + strconv.Quote(name) + "]"
}

func isIdent(s string) bool {
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

// watermark reads WATERMARK FOR c AS c [- INTERVAL …]: Flink's bounded
// out-of-orderness, flinkgo's eventTime.maxOutOfOrderness.
func (pl *planner) watermark(t *table, w *parser.Watermark) {
	var col *column
	for i := range t.cols {
		if t.cols[i].name == w.Column {
			col = &t.cols[i]
		}
	}
	if col == nil {
		pl.errorf(w.P, "WATERMARK FOR %s: no such column%s", w.Column, closest(w.Column, strings.Split(names(t.cols), ", ")))
		return
	}
	if col.t.k != kTime {
		pl.errorf(w.P, "WATERMARK FOR %s: the column must be a TIMESTAMP(3)", w.Column)
		return
	}
	bad := func() {
		pl.errorf(w.Expr.At(), "this watermark strategy is not supported yet; write WATERMARK FOR %s AS %s - INTERVAL 'n' SECOND (or AS %s)", w.Column, w.Column, w.Column)
	}
	var delay int64
	switch e := w.Expr.(type) {
	case *parser.Ident:
		if len(e.Parts) != 1 || e.Parts[0] != w.Column {
			bad()
			return
		}
	case *parser.Binary:
		id, ok := e.L.(*parser.Ident)
		iv, ok2 := e.R.(*parser.Interval)
		if e.Op != "-" || !ok || !ok2 || len(id.Parts) != 1 || id.Parts[0] != w.Column {
			bad()
			return
		}
		ms, err := intervalMillis(iv)
		if err != nil {
			pl.errorf(iv.P, "%v", err)
			return
		}
		delay = ms
	default:
		bad()
		return
	}
	t.rowtime, t.delay, t.timeExpr = w.Column, delay, col.expr
}

func names(cols []column) string {
	n := make([]string, len(cols))
	for i, c := range cols {
		n[i] = c.name
	}
	return strings.Join(n, ", ")
}

// connectorOptions: per connector, Flink's option → flinkgo option (""
// for one read here).
var connectorOptions = map[string]map[string]string{
	"nexmark": {"connector": "", "events.num": "events", "first-event.rate": "eventRate", "next-event.rate": "",
		"person.proportion": "personProportion", "auction.proportion": "auctionProportion", "bid.proportion": "bidProportion",
		"rate": "rate"},
	"datagen":    {"connector": "", "number-of-rows": "count", "rows-per-second": "rate"},
	"kafka":      {"connector": "", "topic": "topic", "properties.bootstrap.servers": "", "properties.group.id": "groupId", "scan.startup.mode": "", "format": "", "sink.delivery-guarantee": "", "sink.transactional-id-prefix": "transactionalIdPrefix"},
	"filesystem": {"connector": "", "path": "path", "format": ""},
	"print":      {"connector": "", "print-identifier": "prefix"},
	"blackhole":  {"connector": ""},
}

// connector maps a WITH clause; nil (reported) when it cannot.
func (pl *planner) connector(ct *parser.CreateTable) *connector {
	opts := map[string]parser.Option{}
	for _, o := range ct.With {
		if _, dup := opts[o.Key]; dup {
			pl.errorf(o.P, "option '%s' is given twice", o.Key)
		}
		opts[o.Key] = o
	}
	cn, ok := opts["connector"]
	if !ok {
		pl.errorf(ct.P, "CREATE TABLE %s needs WITH ('connector' = …): one of blackhole, datagen, filesystem, kafka, nexmark, print", ct.Name)
		return nil
	}
	known, ok := connectorOptions[cn.Value]
	if !ok {
		var all []string
		for k := range connectorOptions {
			all = append(all, k)
		}
		sort.Strings(all)
		pl.errorf(cn.P, "connector '%s' is not supported%s; the connectors are %s", cn.Value, closest(cn.Value, all), strings.Join(all, ", "))
		return nil
	}
	c := &connector{name: cn.Value, with: map[string]parser.Option{}}
	var keys []string
	for _, o := range ct.With {
		keys = append(keys, o.Key)
	}
	for _, k := range keys {
		o := opts[k]
		to, ok := known[k]
		if !ok {
			var all []string
			for kk := range known {
				all = append(all, kk)
			}
			sort.Strings(all)
			pl.errorf(o.P, "option '%s' of connector %s is not supported%s; its options are %s", k, cn.Value, closest(k, all), strings.Join(all, ", "))
			continue
		}
		if to != "" {
			v := quote(o.Value)
			if isNumber(o.Value) {
				v = o.Value
			}
			c.srcOpts = append(c.srcOpts, [2]string{to, v})
			c.with[to] = o
		}
	}
	format := func() {
		f, ok := opts["format"]
		if !ok {
			pl.errorf(ct.P, "connector %s needs 'format' = 'json'", cn.Value)
		} else if f.Value != "json" {
			pl.errorf(f.P, "format '%s' is not supported yet; json is", f.Value)
		}
	}
	switch cn.Value {
	case "nexmark":
		c.source, c.sourceType, c.flatRows = true, "nexmark", true
		if f, n := opts["first-event.rate"], opts["next-event.rate"]; n.Key != "" && f.Key != "" && n.Value != f.Value {
			pl.errorf(n.P, "'next-event.rate' must equal 'first-event.rate' (a rate that changes is not supported yet)")
		}
		if n, ok := opts["next-event.rate"]; ok {
			if _, f := opts["first-event.rate"]; !f {
				c.srcOpts = append(c.srcOpts, [2]string{"eventRate", n.Value})
			}
		}
		pl.nexmarkColumns(ct)
	case "datagen":
		c.source, c.sourceType = true, "datagen"
		for _, col := range ct.Columns {
			if col.Computed == nil && col.Name != "idx" {
				pl.errorf(col.P, "datagen makes records with one column, idx BIGINT (1, 2, 3, …); column %s is not supported yet", col.Name)
			}
		}
	case "kafka":
		format()
		c.source, c.sink, c.sourceType, c.sinkType = true, true, "kafka", "kafka"
		b, ok := opts["properties.bootstrap.servers"]
		if !ok {
			pl.errorf(ct.P, "connector kafka needs 'properties.bootstrap.servers'")
		}
		brokers := make([]string, 0)
		for _, s := range strings.Split(b.Value, ",") {
			if s = strings.TrimSpace(s); s != "" {
				brokers = append(brokers, quote(s))
			}
		}
		common := [][2]string{{"brokers", "[" + strings.Join(brokers, ", ") + "]"}, {"format", "json"}}
		c.with["brokers"] = b
		topic := [][2]string{}
		for _, o := range c.srcOpts {
			if o[0] == "topic" {
				topic = append(topic, o)
			}
		}
		src := append(append(append([][2]string(nil), common...), topic...), filterOpts(c.srcOpts, "groupId")...)
		if m, ok := opts["scan.startup.mode"]; ok {
			v := map[string]string{"earliest-offset": "earliest", "latest-offset": "latest", "group-offsets": "committed"}[m.Value]
			if v == "" {
				pl.errorf(m.P, "'scan.startup.mode' = '%s' is not supported; earliest-offset, latest-offset and group-offsets are", m.Value)
			}
			src = append(src, [2]string{"startingOffsets", v})
			c.with["startingOffsets"] = m
		}
		sink := append(append(append([][2]string(nil), common[:1]...), topic...), filterOpts(c.srcOpts, "transactionalIdPrefix")...)
		if d, ok := opts["sink.delivery-guarantee"]; ok {
			v := map[string]string{"exactly-once": "exactly-once", "at-least-once": "at-least-once", "none": "none"}[d.Value]
			if v == "" {
				pl.errorf(d.P, "'sink.delivery-guarantee' = '%s': exactly-once, at-least-once or none", d.Value)
			}
			sink = append(sink, [2]string{"deliveryGuarantee", v})
			c.with["deliveryGuarantee"] = d
		}
		c.srcOpts, c.sinkOpts = src, sink
	case "filesystem":
		format()
		c.source, c.sink, c.sourceType, c.sinkType = true, true, "file", "file"
		if _, ok := opts["path"]; !ok {
			pl.errorf(ct.P, "connector filesystem needs 'path'")
		}
		// Rows are JSON records already: the sink writes each as a line
		// (its format json would wrap them in a {value, key, timestamp}
		// envelope); the source reads JSON Lines.
		c.sinkOpts = append([][2]string(nil), c.srcOpts...)
		c.srcOpts = append(c.srcOpts, [2]string{"format", "json"})
	case "print":
		c.sink, c.sinkType, c.sinkOpts = true, "print", c.srcOpts
	case "blackhole":
		c.sink, c.sinkType = true, "discard"
	}
	if c.sink && !c.source {
		c.srcOpts = nil
	}
	return c
}

func filterOpts(opts [][2]string, keys ...string) [][2]string {
	var out [][2]string
	for _, o := range opts {
		for _, k := range keys {
			if o[0] == k {
				out = append(out, o)
			}
		}
	}
	return out
}

// nexmarkFields are the members the nexmark source writes for each kind
// of event (pkg/connectors/nexmark/json.go).
var nexmarkFields = map[string][]string{
	"person":  {"id", "name", "emailAddress", "creditCard", "city", "state", "dateTime", "extra"},
	"auction": {"id", "itemName", "description", "initialBid", "reserve", "dateTime", "expires", "seller", "category", "extra"},
	"bid":     {"auction", "bidder", "price", "channel", "url", "dateTime", "extra"},
}

// nexmarkColumns checks a nexmark table's columns against the events the
// source writes: event_type and the person, auction and bid ROWs.
func (pl *planner) nexmarkColumns(ct *parser.CreateTable) {
	for _, c := range ct.Columns {
		if c.Computed != nil {
			continue
		}
		if c.Name == "event_type" {
			continue
		}
		fields, ok := nexmarkFields[c.Name]
		if !ok || c.Type.Name != "ROW" {
			pl.errorf(c.P, "a nexmark table's columns are event_type INT and the ROWs person, auction and bid; %s is not one", c.Name)
			continue
		}
		for _, f := range c.Type.Fields {
			found := false
			for _, n := range fields {
				found = found || n == f.Name
			}
			if !found {
				pl.errorf(f.P, "the nexmark %s has no field %s%s", c.Name, f.Name, closest(f.Name, fields))
			}
		}
	}
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil && s != "" && !strings.ContainsAny(s, "eEnNxX_+")
}
