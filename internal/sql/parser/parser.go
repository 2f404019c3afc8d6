package parser

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Parse reads a whole script. It returns the statements it could read and
// every error found (nil when none): a statement with an error is left
// out, and parsing goes on after its ';'.
func Parse(src string) (*Script, Errors) {
	toks, errs := lex(src)
	p := &parser{toks: toks, errs: errs}
	s := &Script{}
	for p.peek().kind != tEOF {
		if p.peek().op(";") {
			p.next()
			continue
		}
		if st := p.statement(); st != nil {
			s.Stmts = append(s.Stmts, st)
		}
	}
	if len(p.errs) == 0 {
		return s, nil
	}
	return s, tidy(p.errs, len(errs) > 0, toks[len(toks)-1].pos)
}

// tidy orders errors by position; after a lexical error (an unclosed
// string or comment swallows the rest), an error at the end of the script
// only follows from it and is dropped.
func tidy(errs Errors, lexical bool, end Pos) Errors {
	out := errs[:0]
	for _, e := range errs {
		if lexical && e.Pos == end {
			continue
		}
		out = append(out, e)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].Pos, out[j].Pos
		return a.Line < b.Line || a.Line == b.Line && a.Col < b.Col
	})
	return out
}

type parser struct {
	toks []token
	i    int
	errs Errors
}

// bail unwinds the statement being parsed after an error.
type bail struct{}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) peekAt(n int) token {
	if p.i+n < len(p.toks) {
		return p.toks[p.i+n]
	}
	return p.toks[len(p.toks)-1]
}

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

// fail records an error at pos and abandons the statement.
func (p *parser) fail(pos Pos, format string, a ...any) {
	p.errs = append(p.errs, Error{pos, fmt.Sprintf(format, a...)})
	panic(bail{})
}

func (p *parser) unexpected(want string) {
	t := p.peek()
	p.fail(t.pos, "expected %s, found %s", want, t.describe())
}

func (p *parser) accept(kw string) bool {
	if p.peek().is(kw) {
		p.next()
		return true
	}
	return false
}

func (p *parser) acceptOp(o string) bool {
	if p.peek().op(o) {
		p.next()
		return true
	}
	return false
}

func (p *parser) expect(kw string) token {
	if !p.peek().is(kw) {
		p.unexpected(kw)
	}
	return p.next()
}

func (p *parser) expectOp(o string) token {
	if !p.peek().op(o) {
		p.unexpected(fmt.Sprintf("%q", o))
	}
	return p.next()
}

// reserved words never read as a bare name (a column, table or alias).
var reserved = map[string]bool{"SELECT": true, "FROM": true, "WHERE": true, "GROUP": true, "BY": true, "HAVING": true,
	"AND": true, "OR": true, "NOT": true, "AS": true, "ON": true, "JOIN": true, "INNER": true, "LEFT": true, "RIGHT": true,
	"FULL": true, "CROSS": true, "UNION": true, "ORDER": true, "LIMIT": true, "WHEN": true, "THEN": true, "ELSE": true,
	"END": true, "CASE": true, "IN": true, "IS": true, "NULL": true, "LIKE": true, "BETWEEN": true, "INSERT": true,
	"INTO": true, "WITH": true, "OVER": true, "TABLE": true, "NATURAL": true, "USING": true, "WATERMARK": true, "FOR": true, "INTERVAL": true}

func (p *parser) name(what string) (string, Pos) {
	t := p.peek()
	if t.kind == tQuotedIdent || t.kind == tIdent && !reserved[strings.ToUpper(t.text)] {
		p.next()
		return t.text, t.pos
	}
	p.unexpected(what)
	return "", Pos{}
}

// qualifiedName reads a[.b[.c]] (catalog and database parts are kept as written).
func (p *parser) qualifiedName(what string) (string, Pos) {
	n, pos := p.name(what)
	for p.peek().op(".") {
		p.next()
		m, _ := p.name(what)
		n += "." + m
	}
	return n, pos
}

func (p *parser) stringLit(what string) (string, Pos) {
	t := p.peek()
	if t.kind != tString {
		p.unexpected(what)
	}
	p.next()
	return t.text, t.pos
}

// statement parses one statement and its ';' (or the end). On an error it
// skips to the next ';' and returns nil.
func (p *parser) statement() (st Stmt) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(bail); !ok {
				panic(r)
			}
			p.skipStatement()
			st = nil
		}
	}()
	st = p.statementBody()
	if !p.acceptOp(";") && p.peek().kind != tEOF {
		p.unexpected("';' after the statement")
	}
	return st
}

// skipStatement moves past the next ';' at the top level (one inside a
// statement set's BEGIN … END ends only that INSERT).
func (p *parser) skipStatement() {
	for p.peek().kind != tEOF {
		if p.next().op(";") {
			return
		}
	}
}

func (p *parser) statementBody() Stmt {
	t := p.peek()
	switch {
	case t.is("SET"):
		return p.set()
	case t.is("CREATE"):
		return p.create()
	case t.is("INSERT"):
		return p.insert()
	case t.is("EXECUTE"):
		return p.statementSet()
	case t.is("BEGIN") && p.peekAt(1).is("STATEMENT"):
		p.fail(t.pos, "BEGIN STATEMENT SET is the old syntax, not supported: write EXECUTE STATEMENT SET BEGIN … END;")
	case t.is("SELECT"):
		p.fail(t.pos, "a bare SELECT is not supported (it has nowhere to go): write INSERT INTO a table SELECT …")
	case t.is("EXPLAIN"):
		p.fail(t.pos, "EXPLAIN inside a script is not supported yet: run flinkgo explain on the script")
	case t.kind == tIdent:
		p.fail(t.pos, "%s statements are not supported; a script holds SET, CREATE TABLE, CREATE VIEW, INSERT INTO and EXECUTE STATEMENT SET", strings.ToUpper(t.text))
	}
	p.unexpected("a statement (SET, CREATE, INSERT or EXECUTE)")
	return nil
}

func (p *parser) set() Stmt {
	pos := p.next().pos
	if p.peek().kind != tString {
		p.fail(p.peek().pos, "SET needs a quoted key and value: SET 'key' = 'value'; found %s", p.peek().describe())
	}
	k, _ := p.stringLit("a quoted key")
	p.expectOp("=")
	v, _ := p.stringLit("a quoted value: SET 'key' = 'value'")
	return &Set{P: pos, Key: k, Value: v}
}

func (p *parser) create() Stmt {
	pos := p.next().pos
	temporary := p.accept("TEMPORARY")
	switch {
	case p.peek().is("TABLE"):
		p.next()
		return p.createTable(pos)
	case p.peek().is("VIEW"):
		p.next()
		name, _ := p.qualifiedName("a view name")
		p.expect("AS")
		q := p.query()
		return &CreateView{P: pos, Name: name, Temporary: temporary, Query: q}
	}
	p.fail(p.peek().pos, "CREATE %s is not supported; CREATE TABLE and CREATE [TEMPORARY] VIEW are", strings.ToUpper(p.peek().text))
	return nil
}

func (p *parser) createTable(pos Pos) Stmt {
	if p.peek().is("IF") {
		p.fail(p.peek().pos, "CREATE TABLE IF NOT EXISTS is not supported yet: a script's tables are created by the script")
	}
	name, _ := p.qualifiedName("a table name")
	ct := &CreateTable{P: pos, Name: name}
	p.expectOp("(")
	for {
		t := p.peek()
		switch {
		case t.is("WATERMARK"):
			p.next()
			p.expect("FOR")
			col, _ := p.name("the watermark's column")
			p.expect("AS")
			if ct.Watermark != nil {
				p.fail(t.pos, "a table has one WATERMARK")
			}
			ct.Watermark = &Watermark{P: t.pos, Column: col, Expr: p.expr()}
		case t.is("PRIMARY") || t.is("CONSTRAINT"):
			p.fail(t.pos, "PRIMARY KEY is not supported yet (upsert tables are not); leave it out")
		default:
			ct.Columns = append(ct.Columns, p.columnDef(true))
		}
		if p.acceptOp(")") {
			break
		}
		p.expectOp(",")
	}
	if p.peek().is("PARTITIONED") || p.peek().is("COMMENT") {
		p.fail(p.peek().pos, "%s is not supported yet", strings.ToUpper(p.peek().text))
	}
	if p.accept("WITH") {
		ct.With = p.options()
	}
	return ct
}

// columnDef reads name type, or name AS expr when computed is allowed.
func (p *parser) columnDef(computed bool) Column {
	name, pos := p.name("a column name")
	if computed && p.peek().is("AS") {
		p.next()
		return Column{P: pos, Name: name, Computed: p.expr()}
	}
	c := Column{P: pos, Name: name, Type: p.typ()}
	if p.peek().is("NOT") && p.peekAt(1).is("NULL") {
		p.next()
		p.next()
	}
	if p.peek().is("METADATA") {
		p.fail(p.peek().pos, "METADATA columns are not supported yet")
	}
	return c
}

func (p *parser) typ() *Type {
	n, pos := p.name("a type")
	t := &Type{P: pos, Name: strings.ToUpper(n)}
	if t.Name == "DOUBLE" {
		p.accept("PRECISION")
	}
	if t.Name == "ROW" {
		closer := ")"
		if p.acceptOp("<") {
			closer = ">"
		} else {
			p.expectOp("(")
		}
		for {
			t.Fields = append(t.Fields, p.columnDef(false))
			if p.acceptOp(closer) {
				break
			}
			p.expectOp(",")
		}
		return t
	}
	if p.acceptOp("(") {
		for {
			nt := p.peek()
			if nt.kind != tNumber {
				p.unexpected("a number")
			}
			p.next()
			v, err := strconv.Atoi(nt.text)
			if err != nil {
				p.fail(nt.pos, "%s is not a whole number", nt.text)
			}
			t.Args = append(t.Args, v)
			if p.acceptOp(")") {
				break
			}
			p.expectOp(",")
		}
	}
	if p.peek().is("WITH") && p.peekAt(1).is("LOCAL") {
		p.next()
		p.next()
		p.expect("TIME")
		p.expect("ZONE")
		t.Name = "TIMESTAMP_LTZ"
	}
	return t
}

func (p *parser) options() []Option {
	p.expectOp("(")
	var opts []Option
	if p.acceptOp(")") {
		return opts
	}
	for {
		k, pos := p.stringLit("a quoted option key: 'key' = 'value'")
		p.expectOp("=")
		v, _ := p.stringLit("a quoted option value: 'key' = 'value'")
		opts = append(opts, Option{P: pos, Key: k, Value: v})
		if p.acceptOp(")") {
			return opts
		}
		p.expectOp(",")
	}
}

func (p *parser) insert() Stmt {
	pos := p.next().pos
	if p.peek().is("OVERWRITE") {
		p.fail(p.peek().pos, "INSERT OVERWRITE is not supported (streaming jobs append): write INSERT INTO")
	}
	p.expect("INTO")
	name, _ := p.qualifiedName("the table to insert into")
	if p.peek().op("(") {
		p.fail(p.peek().pos, "a column list after INSERT INTO %s is not supported yet: the query's columns fill the table's in order", name)
	}
	return &Insert{P: pos, Table: name, Query: p.query()}
}

func (p *parser) statementSet() Stmt {
	pos := p.next().pos
	p.expect("STATEMENT")
	p.expect("SET")
	p.expect("BEGIN")
	ss := &StatementSet{P: pos}
	for !p.peek().is("END") {
		if p.peek().kind == tEOF {
			p.unexpected("END")
		}
		if in := p.setInsert(); in != nil {
			ss.Inserts = append(ss.Inserts, in)
		}
	}
	p.next()
	return ss
}

// setInsert reads one INSERT of a statement set and its ';'. After an
// error it skips to the next ';' and returns nil, so the set's other
// INSERTs are still read (and its END is not taken for a statement).
func (p *parser) setInsert() (in *Insert) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(bail); !ok {
				panic(r)
			}
			for p.peek().kind != tEOF && !p.peek().is("END") {
				if p.next().op(";") {
					break
				}
			}
			in = nil
		}
	}()
	if !p.peek().is("INSERT") {
		p.fail(p.peek().pos, "a statement set holds INSERT INTO statements only, found %s", p.peek().describe())
	}
	in = p.insert().(*Insert)
	p.expectOp(";")
	return in
}

// query reads a SELECT and refuses what follows it that is not supported.
func (p *parser) query() *Select {
	if p.peek().op("(") {
		p.next()
		q := p.query()
		p.expectOp(")")
		return q
	}
	s := p.selectCore()
	t := p.peek()
	switch {
	case t.is("UNION") || t.is("INTERSECT") || t.is("EXCEPT"):
		p.fail(t.pos, "%s is not supported yet", strings.ToUpper(t.text))
	case t.is("ORDER"):
		p.fail(t.pos, "ORDER BY is not supported yet (on a stream it needs a time attribute first and a LIMIT: top-N)")
	case t.is("LIMIT"):
		p.fail(t.pos, "LIMIT is not supported yet")
	}
	return s
}

func (p *parser) selectCore() *Select {
	if p.peek().is("WITH") {
		p.fail(p.peek().pos, "WITH (common table expressions) is not supported yet: write CREATE VIEW")
	}
	pos := p.expect("SELECT").pos
	s := &Select{P: pos}
	if p.peek().is("DISTINCT") {
		p.fail(p.peek().pos, "SELECT DISTINCT is not supported yet (an unbounded deduplication)")
	}
	p.accept("ALL")
	for {
		s.Items = append(s.Items, p.selectItem())
		if !p.acceptOp(",") {
			break
		}
	}
	p.expect("FROM")
	s.From = p.fromItem()
	for {
		j := p.join(s.From)
		if j == nil {
			break
		}
		s.From = j
	}
	if p.accept("WHERE") {
		s.Where = p.expr()
	}
	if p.peek().is("GROUP") {
		p.next()
		p.expect("BY")
		for {
			s.GroupBy = append(s.GroupBy, p.expr())
			if !p.acceptOp(",") {
				break
			}
		}
	}
	if p.accept("HAVING") {
		s.Having = p.expr()
	}
	if p.peek().is("WINDOW") {
		p.fail(p.peek().pos, "the WINDOW clause is not supported yet")
	}
	return s
}

// join reads [INNER|LEFT|RIGHT|FULL [OUTER]] JOIN item ON condition
// after left; nil when no join follows.
func (p *parser) join(left TableRef) *Join {
	t := p.peek()
	kind := ""
	switch {
	case t.is("JOIN"):
		kind = "INNER"
	case t.is("INNER"):
		p.next()
		kind = "INNER"
	case t.is("LEFT") || t.is("RIGHT") || t.is("FULL"):
		p.next()
		kind = strings.ToUpper(t.text)
		p.accept("OUTER")
	case t.is("CROSS"):
		p.fail(t.pos, "CROSS JOIN is not supported (every pair of rows, for ever): write JOIN … ON with an equality and a time bound")
	case t.op(","):
		p.fail(t.pos, "joins written FROM a, b are not supported yet: write a JOIN b ON the condition")
	case t.is("NATURAL"):
		p.fail(t.pos, "NATURAL JOIN is not supported: write JOIN … ON the condition")
	default:
		return nil
	}
	if !p.peek().is("JOIN") {
		p.unexpected("JOIN")
	}
	p.next()
	right := p.fromItem()
	if u := p.peek(); u.is("USING") {
		p.fail(u.pos, "JOIN … USING is not supported yet: write ON a.col = b.col")
	}
	if !p.peek().is("ON") {
		p.unexpected("ON and the join condition")
	}
	p.next()
	return &Join{P: t.pos, Kind: kind, Left: left, Right: right, On: p.expr()}
}

func (p *parser) selectItem() SelectItem {
	t := p.peek()
	if t.op("*") {
		p.next()
		return SelectItem{P: t.pos}
	}
	if (t.kind == tIdent || t.kind == tQuotedIdent) && p.peekAt(1).op(".") && p.peekAt(2).op("*") {
		p.next()
		p.next()
		p.next()
		return SelectItem{P: t.pos, Of: t.text}
	}
	it := SelectItem{P: t.pos, Expr: p.expr()}
	if p.accept("AS") {
		it.Alias, _ = p.name("a column alias")
	} else if n := p.peek(); n.kind == tQuotedIdent || n.kind == tIdent && !reserved[strings.ToUpper(n.text)] {
		it.Alias, _ = p.name("a column alias")
	}
	return it
}

func (p *parser) alias() string {
	if p.accept("AS") {
		a, _ := p.name("an alias")
		return a
	}
	if n := p.peek(); n.kind == tQuotedIdent || n.kind == tIdent && !reserved[strings.ToUpper(n.text)] && !n.is("WINDOW") {
		a, _ := p.name("an alias")
		return a
	}
	return ""
}

func (p *parser) fromItem() TableRef {
	t := p.peek()
	switch {
	case t.op("("):
		p.next()
		if !p.peek().is("SELECT") {
			p.unexpected("SELECT")
		}
		q := p.query()
		p.expectOp(")")
		return &SubQuery{P: t.pos, Query: q, Alias: p.alias()}
	case t.is("TABLE"):
		p.next()
		p.expectOp("(")
		w := p.windowTVF()
		p.expectOp(")")
		w.Alias = p.alias()
		return w
	case t.is("LATERAL") || t.is("UNNEST"):
		p.fail(t.pos, "%s is not supported yet", strings.ToUpper(t.text))
	}
	name, pos := p.qualifiedName("a table name")
	if p.peek().is("FOR") {
		p.fail(p.peek().pos, "FOR SYSTEM_TIME AS OF (temporal joins) is not supported yet")
	}
	return &TableName{P: pos, Name: name, Alias: p.alias()}
}

// windowTVF reads TUMBLE(TABLE t, DESCRIPTOR(c), size) or HOP(…, slide, size).
func (p *parser) windowTVF() *WindowTVF {
	kw, pos := p.name("a window function (TUMBLE, HOP or SESSION)")
	kind := strings.ToUpper(kw)
	switch kind {
	case "TUMBLE", "HOP", "SESSION":
	case "CUMULATE":
		p.fail(pos, "the %s window function is not supported yet; TUMBLE, HOP and SESSION are", kind)
	default:
		p.fail(pos, "TABLE(%s(…)) is not supported; the window functions TUMBLE, HOP and SESSION are", kw)
	}
	w := &WindowTVF{P: pos, Kind: kind}
	p.expectOp("(")
	if p.accept("TABLE") {
		n, np := p.qualifiedName("a table name")
		w.Input = &TableName{P: np, Name: n}
		if kind == "SESSION" && p.peek().is("PARTITION") {
			p.next()
			p.expect("BY")
			for {
				c, cp := p.name("a partition column")
				w.Partition = append(w.Partition, c)
				w.PartitionP = append(w.PartitionP, cp)
				if !p.peek().op(",") || p.peekAt(1).is("DESCRIPTOR") {
					break
				}
				p.next()
			}
		}
	} else if p.peek().op("(") {
		w.Input = p.fromItem()
	} else {
		p.unexpected("TABLE name as the window function's first argument")
	}
	p.expectOp(",")
	dt := p.peek()
	if !dt.is("DESCRIPTOR") {
		p.unexpected("DESCRIPTOR(time column)")
	}
	p.next()
	p.expectOp("(")
	w.Descriptor, w.DescP = p.name("the time column")
	p.expectOp(")")
	for p.acceptOp(",") {
		w.Args = append(w.Args, p.expr())
	}
	p.expectOp(")")
	return w
}

// Expressions, lowest precedence first.

func (p *parser) expr() Expr { return p.or() }

func (p *parser) or() Expr {
	l := p.and()
	for p.peek().is("OR") {
		t := p.next()
		l = &Binary{P: t.pos, Op: "OR", L: l, R: p.and()}
	}
	return l
}

func (p *parser) and() Expr {
	l := p.not()
	for p.peek().is("AND") {
		t := p.next()
		l = &Binary{P: t.pos, Op: "AND", L: l, R: p.not()}
	}
	return l
}

func (p *parser) not() Expr {
	if t := p.peek(); t.is("NOT") {
		p.next()
		return &Unary{P: t.pos, Op: "NOT", X: p.not()}
	}
	return p.comparison()
}

func (p *parser) comparison() Expr {
	l := p.additive()
	for {
		t := p.peek()
		switch {
		case t.op("=") || t.op("<>") || t.op("!=") || t.op("<") || t.op("<=") || t.op(">") || t.op(">="):
			p.next()
			op := t.text
			if op == "!=" {
				op = "<>"
			}
			l = &Binary{P: t.pos, Op: op, L: l, R: p.additive()}
		case t.is("IS"):
			p.next()
			not := p.accept("NOT")
			if !p.accept("NULL") {
				p.unexpected("NULL after IS")
			}
			l = &IsNull{P: t.pos, X: l, Not: not}
		case t.is("NOT") && (p.peekAt(1).is("IN") || p.peekAt(1).is("LIKE") || p.peekAt(1).is("BETWEEN")):
			p.next()
			l = p.postfix(l, true)
		case t.is("IN") || t.is("LIKE") || t.is("BETWEEN"):
			l = p.postfix(l, false)
		default:
			return l
		}
	}
}

func (p *parser) postfix(l Expr, not bool) Expr {
	t := p.next()
	switch {
	case t.is("IN"):
		p.expectOp("(")
		if p.peek().is("SELECT") {
			p.fail(p.peek().pos, "IN (SELECT …) subqueries are not supported yet")
		}
		in := &In{P: t.pos, X: l, Not: not}
		for {
			in.List = append(in.List, p.expr())
			if p.acceptOp(")") {
				return in
			}
			p.expectOp(",")
		}
	case t.is("LIKE"):
		return &Like{P: t.pos, X: l, Pattern: p.additive(), Not: not}
	default:
		p.accept("SYMMETRIC")
		lo := p.additive()
		p.expect("AND")
		return &Between{P: t.pos, X: l, Lo: lo, Hi: p.additive(), Not: not}
	}
}

func (p *parser) additive() Expr {
	l := p.multiplicative()
	for {
		t := p.peek()
		if !(t.op("+") || t.op("-") || t.op("||")) {
			return l
		}
		p.next()
		l = &Binary{P: t.pos, Op: t.text, L: l, R: p.multiplicative()}
	}
}

func (p *parser) multiplicative() Expr {
	l := p.unary()
	for {
		t := p.peek()
		if !(t.op("*") || t.op("/") || t.op("%")) {
			return l
		}
		p.next()
		l = &Binary{P: t.pos, Op: t.text, L: l, R: p.unary()}
	}
}

func (p *parser) unary() Expr {
	t := p.peek()
	if t.op("-") || t.op("+") {
		p.next()
		x := p.unary()
		if t.text == "+" {
			return x
		}
		return &Unary{P: t.pos, Op: "-", X: x}
	}
	return p.primary()
}

func (p *parser) primary() Expr {
	t := p.peek()
	switch {
	case t.kind == tNumber:
		p.next()
		if strings.Count(t.text, ".") > 1 {
			p.fail(t.pos, "%s is not a number", t.text)
		}
		return &Literal{P: t.pos, Kind: "number", Text: t.text}
	case t.kind == tString:
		p.next()
		return &Literal{P: t.pos, Kind: "string", Text: t.text}
	case t.op("("):
		p.next()
		if p.peek().is("SELECT") {
			p.fail(p.peek().pos, "scalar subqueries are not supported yet")
		}
		e := p.expr()
		p.expectOp(")")
		return e
	case t.is("TRUE") || t.is("FALSE"):
		p.next()
		return &Literal{P: t.pos, Kind: "bool", Text: strings.ToUpper(t.text)}
	case t.is("NULL"):
		p.next()
		return &Literal{P: t.pos, Kind: "null", Text: "NULL"}
	case t.is("INTERVAL"):
		return p.interval()
	case t.is("CASE"):
		return p.caseExpr()
	case t.is("CAST") || t.is("TRY_CAST"):
		p.next()
		p.expectOp("(")
		x := p.expr()
		p.expect("AS")
		ty := p.typ()
		p.expectOp(")")
		return &Cast{P: t.pos, X: x, Type: ty}
	case t.kind == tIdent && reserved[strings.ToUpper(t.text)]:
		p.unexpected("an expression")
	case t.kind == tIdent || t.kind == tQuotedIdent:
		p.next()
		if t.kind == tIdent && p.peek().op("(") {
			return p.call(t)
		}
		id := &Ident{P: t.pos, Parts: []string{t.text}}
		for p.peek().op(".") {
			p.next()
			n, _ := p.name("a name after '.'")
			id.Parts = append(id.Parts, n)
		}
		return id
	}
	p.unexpected("an expression")
	return nil
}

func (p *parser) call(name token) Expr {
	p.next() // (
	c := &Call{P: name.pos, Name: strings.ToUpper(name.text)}
	switch {
	case p.peek().op("*"):
		p.next()
		c.Star = true
		p.expectOp(")")
	case p.acceptOp(")"):
	default:
		c.Distinct = p.accept("DISTINCT")
		for {
			c.Args = append(c.Args, p.expr())
			if p.acceptOp(")") {
				break
			}
			p.expectOp(",")
		}
	}
	if t := p.peek(); t.is("OVER") {
		p.fail(t.pos, "OVER windows (%s(…) OVER …) are not supported yet", c.Name)
	}
	if t := p.peek(); t.is("FILTER") {
		p.fail(t.pos, "aggregate FILTER (WHERE …) is not supported yet: write the condition as CASE WHEN … THEN x END inside the aggregate")
	}
	return c
}

func (p *parser) interval() Expr {
	t := p.next()
	v, _ := p.stringLit("the interval's quoted amount: INTERVAL '10' SECOND")
	u, upos := p.name("a time unit (SECOND, MINUTE, HOUR, DAY)")
	unit := strings.TrimSuffix(strings.ToUpper(u), "S")
	switch unit {
	case "MILLISECOND", "SECOND", "MINUTE", "HOUR", "DAY":
	default:
		p.fail(upos, "interval unit %s is not supported; MILLISECOND, SECOND, MINUTE, HOUR and DAY are", u)
	}
	if p.peek().is("TO") {
		p.fail(p.peek().pos, "interval ranges (… TO …) are not supported yet: write a single unit")
	}
	return &Interval{P: t.pos, Value: v, Unit: unit}
}

func (p *parser) caseExpr() Expr {
	t := p.next()
	c := &Case{P: t.pos}
	if !p.peek().is("WHEN") {
		c.Operand = p.expr()
	}
	for p.accept("WHEN") {
		cond := p.expr()
		p.expect("THEN")
		c.Whens = append(c.Whens, When{Cond: cond, Result: p.expr()})
	}
	if len(c.Whens) == 0 {
		p.unexpected("WHEN")
	}
	if p.accept("ELSE") {
		c.Else = p.expr()
	}
	p.expect("END")
	return c
}
