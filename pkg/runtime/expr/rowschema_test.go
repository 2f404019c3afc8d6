package expr

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/api"
)

var (
	bidRows = []string{"left", "right"}
	bids    = &api.Schema{Source: "bids", Fields: map[string]string{"idx": "int", "price": "float", "tags": "list", "extra": "any"}}
)

// A row's members are checked against its own schema (nil: unchecked);
// functions, variables, let names and a row used whole are not members.
func TestCompileRowExprWith(t *testing.T) {
	schemas := []*api.Schema{bids, nil}
	for _, src := range []string{`left.idx + 1`, `left.price * 2 > 1 && right.anything`, `len(left.tags) > 0`, `left.extra`,
		`right.whatever + key`, `let p = left.price; p > 1`, `toJSON(left)`, `left?.idx`} {
		_, err := CompileRowExprWith(schemas, src, Any, bidRows, "key")
		assert.NoError(t, err, src)
	}
	for src, want := range map[string]string{
		`left.idz`:                `unknown field "idz" of left; did you mean "idx"? (the schema of source "bids" has extra, idx, price, tags)`,
		`right.x + left["prise"]`: `unknown field "prise" of left; did you mean "price"?`,
		`left.idx > "a"`:          "mismatched types int and string",
	} {
		_, err := CompileRowExprWith(schemas, src, Any, bidRows)
		if assert.Error(t, err, src) {
			assert.Contains(t, err.Error(), want, src)
		}
	}
	_, err := CompileRowExprWith(schemas, `left.idx`, Bool, bidRows)
	require.ErrorContains(t, err, "expected bool, but got int")
	_, err = CompileRowExprWith(schemas, `left.idx + price`, Any, bidRows, "key")
	require.EqualError(t, err, `unknown name "price": an expression here reads the rows left, right and key; write left.price or right.price`,
		"a bare member name would read nothing, with or without a schema")
	_, err = CompileRowExpr(`idx`, Any, bidRows)
	require.ErrorContains(t, err, `unknown name "idx"`)
	_, err = CompileRowExprWith([]*api.Schema{nil, bids}, `left.idz`, Any, bidRows)
	require.NoError(t, err, "the left row is untyped")
}

// The schema is checked at compile time only: a row lacking a declared
// member reads it as nil at run time, on the native path as without one.
func TestRowExprWithSchemaRunsAsWithout(t *testing.T) {
	e, err := CompileRowExprWith([]*api.Schema{bids, nil}, `left.idx`, Any, bidRows)
	require.NoError(t, err)
	s := NewRowSet(bidRows, e)
	require.NotNil(t, s.nexprs[0].value, "the native form is kept")
	require.NoError(t, s.Load([]byte(`{"idx": 7}`), nil))
	v, err := s.Eval(0)
	require.NoError(t, err)
	assert.EqualValues(t, 7, v)
	require.NoError(t, s.Load([]byte(`{"other": 1}`), nil))
	v, err = s.Eval(0)
	require.NoError(t, err)
	assert.Nil(t, v)
}
