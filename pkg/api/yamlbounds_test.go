package api

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const boundsJob = "name: x\noperators:\n  - {uid: in, type: datagen}\n  - {uid: out, type: print, from: [in]}\n"

// blockNest writes a block mapping (or sequence) n levels deep under
// operators[0].x.
func blockNest(n int, seq bool) string {
	var b strings.Builder
	b.WriteString("name: x\noperators:\n  - uid: in\n    type: datagen\n    x:\n")
	for i := range n {
		ind := strings.Repeat("  ", i+3)
		if seq {
			b.WriteString(ind + "-\n")
		} else {
			b.WriteString(ind + "a:\n")
		}
	}
	b.WriteString(strings.Repeat("  ", n+3) + "1\n  - {uid: out, type: print, from: [in]}\n")
	return b.String()
}

// flowNest puts a flow collection nested n deep as operators[0].x.
func flowNest(n int, open, close string) string {
	return "name: x\noperators:\n  - {uid: in, type: datagen, x: " + strings.Repeat(open, n) + strings.Repeat(close, n) +
		"}\n  - {uid: out, type: print, from: [in]}\n"
}

// The depth and element bounds hold before the parser runs: the first
// token past a bound is reported with its line and column, and a document
// within the bounds parses as before (its other problems are reported).
func TestYAMLBounds(t *testing.T) {
	var wide strings.Builder
	wide.WriteString("name: x\noperators:\n  - uid: in\n    type: datagen\n    x:\n")
	for i := 0; i < maxYAMLElements; i++ {
		fmt.Fprintf(&wide, "      - %d\n", i)
	}
	for _, tc := range []struct {
		name, src string
		want      string // "" : no bounds error
	}{
		// operators[0] is 2 levels (operators, the list) + its mapping
		{"flow list at the bound", flowNest(maxYAMLDepth-3, "[", "]"), ""},
		{"flow list past the bound", flowNest(maxYAMLDepth-2, "[", "]"), "3:94: nesting deeper than 64 levels"},
		{"flow list 40,000 deep", flowNest(40_000, "[", "]"), "3:94: nesting deeper than 64 levels"},
		{"flow mapping past the bound", flowNest(maxYAMLDepth, "{a: ", "}"), "3:277: nesting deeper than 64 levels"},
		{"block mapping at the bound", blockNest(maxYAMLDepth-3, false), ""},
		{"block mapping past the bound", blockNest(maxYAMLDepth-2, false), "67:130: nesting deeper than 64 levels"},
		{"block sequence past the bound", blockNest(maxYAMLDepth-2, true), "67:129: nesting deeper than 64 levels"},
		{"compact sequences past the bound", "name: x\nx: " + strings.Repeat("- ", maxYAMLDepth) + "1\n", "2:130: nesting deeper than 64 levels"},
		{"too many elements", wide.String(), "24999:7: more than 50000 YAML elements"},
		{"a big spec within the bound", strings.Repeat("# comment\n", 1000) + boundsJob, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := NewDecoder("b.yaml")
			ok := d.CheckBounds([]byte(tc.src))
			if tc.want == "" {
				require.True(t, ok, "%v", d.Errors.Err())
				return
			}
			require.False(t, ok)
			require.Len(t, d.Errors.Errors, 1)
			assert.True(t, strings.HasPrefix(where(d.Errors.Errors[0]), tc.want), "got %s", where(d.Errors.Errors[0]))
		})
	}
}

// A sequence written at its key's column is one level below the key, and
// siblings after it are back at the key's level: depth is not overcounted
// by the usual layout of specs.
func TestYAMLBoundsBlockLayout(t *testing.T) {
	var b strings.Builder
	b.WriteString("name: x\noperators:\n")
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(&b, "- uid: op%d\n  type: map\n  from:\n  - op%d\n", i, i-1)
	}
	d := NewDecoder("b.yaml")
	require.True(t, d.CheckBounds([]byte(b.String())), "%v", d.Errors.Err())
}

// Aliases cannot multiply a small document into a huge decoded one: an
// anchor of 1,000 uids aliased 100 times would decode 100,000 strings.
func TestYAMLAliasExpansionBounded(t *testing.T) {
	list := strings.TrimSuffix(strings.Repeat("in, ", 1000), ", ")
	var b strings.Builder
	b.WriteString("name: x\noperators:\n  - {uid: in, type: datagen, x: &ins [" + list + "]}\n")
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&b, "  - {uid: out%d, type: print, from: *ins}\n", i)
	}
	_, errs := parse(t, "a.yaml", []byte(b.String()))
	var expansion []string
	for _, fe := range errs {
		if strings.Contains(fe.Msg, "aliases expand") {
			expansion = append(expansion, where(fe))
		}
	}
	require.Len(t, expansion, 1, "reported once")
	assert.True(t, strings.HasPrefix(expansion[0], "53:37: aliases expand the document past 50000 elements"), expansion[0])
	assert.Less(t, len(errs), 200, "the remaining aliases are not followed")
}

// A spec over maxSpecBytes is refused before anything reads it.
func TestSpecSizeBounded(t *testing.T) {
	src := boundsJob + strings.Repeat("#", maxSpecBytes)
	_, errs := parse(t, "big.yaml", []byte(src))
	require.Len(t, errs, 1)
	assert.Contains(t, where(errs[0]), "1:1: the spec has 524376 bytes, more than the 524288")
}
