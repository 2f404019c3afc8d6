package api

import (
	"strconv"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/scanner"
	"github.com/goccy/go-yaml/token"
)

// Bounds of a YAML document, checked before it is parsed. goccy/go-yaml's
// parser grows quadratically with nesting (a flow list nested 40,000 deep,
// 80 KB, took 2.5 GB and 3.7 s) and its work and memory grow with the
// number of elements; a job spec or a config file needs a few levels and a
// few thousand elements (a 1,000-operator chain written out is ~15,000).
const (
	// maxYAMLDepth bounds the nesting of collections (block and flow).
	maxYAMLDepth = 64
	// maxYAMLElements bounds the document's tokens that make values (keys,
	// scalars, collections, entries), and what aliases expand to.
	maxYAMLElements = 50_000
	// maxSpecBytes bounds a job spec's text (the control API's body limit
	// is 1 MiB, JSON-escaped).
	maxSpecBytes = 512 << 10
)

// CheckBounds scans src with the tokenizer the parser uses, one token at a
// time (nothing is kept), and records an error at the first place that
// exceeds maxYAMLDepth or maxYAMLElements. It reports whether src is
// within bounds; a tokenizer error is left for the parser to report.
func (d *Decoder) CheckBounds(src []byte) bool {
	var s scanner.Scanner
	s.Init(string(src))
	var b boundsScan
	for {
		toks, err := s.Scan()
		for _, tk := range toks {
			if msg, over := b.add(tk); over {
				d.Errorf(Pos{Line: tk.Position.Line, Column: tk.Position.Column}, "", "%s", msg)
				return false
			}
		}
		if err != nil { // io.EOF, or a syntax error the parser words better
			return true
		}
	}
}

// blockLevel is an open block collection: the column of its entries and
// whether they are sequence entries ("-") or mapping keys.
type blockLevel struct {
	col int
	seq bool
}

// boundsScan tracks the nesting and the element count of a token stream.
type boundsScan struct {
	flow     int // open flow collections ([ and {)
	block    []blockLevel
	elements int
	prev     *token.Token // previous token, for the key of a ':'
}

// add accounts for one token; over reports the first bound it breaks.
func (b *boundsScan) add(tk *token.Token) (msg string, over bool) {
	defer func() { b.prev = tk }()
	switch tk.Type {
	case token.CommentType, token.CollectEntryType, token.DocumentHeaderType, token.DocumentEndType, token.SpaceType:
		return "", false
	case token.SequenceEndType, token.MappingEndType:
		b.flow = max(b.flow-1, 0)
		return "", false
	case token.SequenceStartType, token.MappingStartType:
		b.flow++
	case token.SequenceEntryType:
		if b.flow == 0 {
			b.open(tk.Position.Column, true)
		}
	case token.MappingValueType:
		if b.flow == 0 && b.prev != nil && b.prev.Position.Line == tk.Position.Line {
			b.open(b.prev.Position.Column, false)
		}
	}
	if b.elements++; b.elements > maxYAMLElements {
		return "more than " + strconv.Itoa(maxYAMLElements) + " YAML elements (keys, values, list entries); a job spec needs far fewer: shorten its lists or split the job", true
	}
	if len(b.block)+b.flow > maxYAMLDepth {
		return "nesting deeper than " + strconv.Itoa(maxYAMLDepth) + " levels; a job spec needs a few: flatten this value", true
	}
	return "", false
}

// open enters the block collection whose entries start at col: it closes
// deeper (and finished sibling) levels first. A sequence written at the
// column of its mapping key ("key:\n- a") is that key's child.
func (b *boundsScan) open(col int, seq bool) {
	for len(b.block) > 0 {
		top := b.block[len(b.block)-1]
		if top.col > col || (top.col == col && (top.seq || !seq)) {
			b.block = b.block[:len(b.block)-1]
			continue
		}
		break
	}
	b.block = append(b.block, blockLevel{col: col, seq: seq})
}

// chargeAlias accounts for following an alias to value: the decoder then
// decodes value once more, so aliases could multiply a document within the
// element bound into billions of decoded values. It reports whether the
// expansion stays within maxYAMLElements (recording the error once).
func (d *Decoder) chargeAlias(alias, value ast.Node) bool {
	if d.expansionFailed {
		return false
	}
	if d.sizes == nil {
		d.sizes = map[ast.Node]int{}
	}
	n, ok := d.sizes[value]
	if !ok {
		n = nodeCount(value)
		d.sizes[value] = n
	}
	if d.expanded += n; d.expanded > maxYAMLElements {
		d.expansionFailed = true
		d.Errorf(nodePos(alias), "", "aliases expand the document past %d elements; write the values out, or use fewer aliases", maxYAMLElements)
		return false
	}
	return true
}

// nodeCount counts the nodes under n (aliases in it count once: they are
// charged again when followed).
func nodeCount(n ast.Node) int {
	c := &counter{}
	ast.Walk(c, n)
	return c.n
}

type counter struct{ n int }

func (c *counter) Visit(ast.Node) ast.Visitor {
	c.n++
	return c
}
