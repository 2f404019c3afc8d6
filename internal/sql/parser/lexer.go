// Package parser reads a Flink SQL script into statements. It is a
// hand-written recursive-descent parser for the subset of Flink's dialect
// flinkgo plans (docs/sql.md): no existing Go SQL parser reads Flink's
// window table functions (TABLE(TUMBLE(TABLE t, DESCRIPTOR(c), …))) as
// they are written, and the subset is small enough that owning it costs
// less than bending a general one. Every error carries the line:column of
// the token it is about; the parser recovers at the next ';' so one run
// reports the errors of every statement.
package parser

import (
	"fmt"
	"strings"
	"unicode"
)

// Pos is a place in the script, 1-based.
type Pos struct{ Line, Col int }

func (p Pos) String() string { return fmt.Sprintf("%d:%d", p.Line, p.Col) }

// Error is one problem at a place in the script.
type Error struct {
	Pos Pos
	Msg string
}

func (e Error) Error() string { return e.Pos.String() + ": " + e.Msg }

// Errors are all the problems found in a script, in order.
type Errors []Error

func (es Errors) Error() string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

type tokKind int

const (
	tEOF tokKind = iota
	tIdent
	tQuotedIdent // `name`
	tNumber
	tString
	tOp
)

type token struct {
	kind tokKind
	text string // identifiers as written; strings unquoted; operators as is
	pos  Pos
}

// is reports whether t is the keyword kw (case-insensitive; never a quoted identifier).
func (t token) is(kw string) bool { return t.kind == tIdent && strings.EqualFold(t.text, kw) }

func (t token) op(o string) bool { return t.kind == tOp && t.text == o }

func (t token) describe() string {
	switch t.kind {
	case tEOF:
		return "the end of the script"
	case tString:
		return fmt.Sprintf("'%s'", t.text)
	case tQuotedIdent:
		return "`" + t.text + "`"
	}
	return fmt.Sprintf("%q", t.text)
}

// lex splits src into tokens. Comments (-- and /* */) are dropped.
func lex(src string) ([]token, Errors) {
	var toks []token
	var errs Errors
	line, col := 1, 1
	i := 0
	adv := func(n int) {
		for k := 0; k < n && i < len(src); k++ {
			if src[i] == '\n' {
				line, col = line+1, 1
			} else {
				col++
			}
			i++
		}
	}
	for i < len(src) {
		c := src[i]
		p := Pos{line, col}
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			adv(1)
		case c == '-' && i+1 < len(src) && src[i+1] == '-':
			for i < len(src) && src[i] != '\n' {
				adv(1)
			}
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				errs = append(errs, Error{p, "comment /* is never closed with */"})
				adv(len(src))
				break
			}
			adv(end + 4)
		case c == '\'':
			var b strings.Builder
			adv(1)
			closed := false
			for i < len(src) {
				if src[i] == '\'' {
					if i+1 < len(src) && src[i+1] == '\'' {
						b.WriteByte('\'')
						adv(2)
						continue
					}
					adv(1)
					closed = true
					break
				}
				b.WriteByte(src[i])
				adv(1)
			}
			if !closed {
				errs = append(errs, Error{p, "string literal is never closed with '"})
			}
			toks = append(toks, token{tString, b.String(), p})
		case c == '`':
			end := strings.IndexByte(src[i+1:], '`')
			if end < 0 {
				errs = append(errs, Error{p, "quoted identifier is never closed with `"})
				adv(len(src))
				break
			}
			toks = append(toks, token{tQuotedIdent, src[i+1 : i+1+end], p})
			adv(end + 2)
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			j := i
			for j < len(src) && (src[j] >= '0' && src[j] <= '9' || src[j] == '.') {
				j++
			}
			toks = append(toks, token{tNumber, src[i:j], p})
			adv(j - i)
		case c == '_' || c < 0x80 && unicode.IsLetter(rune(c)):
			j := i
			for j < len(src) && (src[j] == '_' || src[j] < 0x80 && (unicode.IsLetter(rune(src[j])) || unicode.IsDigit(rune(src[j])))) {
				j++
			}
			toks = append(toks, token{tIdent, src[i:j], p})
			adv(j - i)
		default:
			two := ""
			if i+1 < len(src) {
				two = src[i : i+2]
			}
			switch two {
			case "<>", "<=", ">=", "!=", "||":
				toks = append(toks, token{tOp, two, p})
				adv(2)
				continue
			}
			if strings.IndexByte("=<>+-*/%(),.;", c) >= 0 {
				toks = append(toks, token{tOp, string(c), p})
				adv(1)
				continue
			}
			errs = append(errs, Error{p, fmt.Sprintf("unexpected character %q", c)})
			adv(1)
		}
	}
	toks = append(toks, token{tEOF, "", Pos{line, col}})
	return toks, errs
}
