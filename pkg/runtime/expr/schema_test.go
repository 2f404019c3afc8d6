package expr

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

var clicks = &api.Schema{Source: "in", Fields: map[string]string{"user": "string", "amount": "float", "n": "int", "tags": "list", "extra": "any"}}

// A schema types the fields: misspelled ones and type errors are compile
// errors; functions, let names, reserved names and extra variables are
// not fields.
func TestCompileWithSchema(t *testing.T) {
	for _, src := range []string{`upper(user) == "A"`, `let x = n + 1; x > 2`, `amount > 1.5 && n % 2 == 0`, `len(tags) > 0 && all(tags, # != "")`,
		`extra != nil`, `key == "k" || value != "" || timestamp > 0`, `acc + n > 0`} {
		_, err := CompileWith(clicks, src, Bool, "acc")
		assert.NoError(t, err, src)
	}
	for src, want := range map[string]string{
		`usr == "a"`:   `unknown field "usr"; did you mean "user"? (the schema of source "in" has amount, extra, n, tags, user)`,
		`n + 1`:        "expected bool, but got int",
		`user > 1`:     "mismatched types string and int",
		`amont * 2`:    `unknown field "amont"; did you mean "amount"?`,
		`nothing == 1`: `unknown field "nothing" (the schema`,
	} {
		_, err := CompileWith(clicks, src, Bool)
		if assert.Error(t, err, src) {
			assert.Contains(t, err.Error(), want, src)
		}
	}
}

// At run time a record that lacks a declared field the expression reads,
// or holds another type there, fails the evaluation saying so; a JSON
// integer is a float as well.
func TestEvalWithSchema(t *testing.T) {
	p, err := CompileWith(clicks, `amount * 2 > 3 && user != ""`, Bool)
	require.NoError(t, err)
	ok, err := p.EvalBool(&runtime.Record{Value: []byte(`{"user": "u", "amount": 2}`)})
	require.NoError(t, err)
	assert.True(t, ok)
	_, err = p.EvalBool(&runtime.Record{Value: []byte(`{"amount": 2}`)})
	assert.ErrorContains(t, err, `the record has no field "user" (the schema declares it string)`)
	_, err = p.EvalBool(&runtime.Record{Value: []byte(`{"user": 7, "amount": 2}`)})
	assert.ErrorContains(t, err, `field "user" is 7, not string as the schema declares`)

	// Without a schema a missing field reads as nil.
	q, err := Compile(`user == nil`, Bool)
	require.NoError(t, err)
	ok, err = q.EvalBool(&runtime.Record{Value: []byte(`{"amount": 2}`)})
	require.NoError(t, err)
	assert.True(t, ok)
}

// A condition that is arithmetic at its root is refused without a schema
// too: it never gives true or false.
func TestArithmeticIsNoCondition(t *testing.T) {
	for _, src := range []string{"idx + 1", "-idx", "idx % 2", `name + "x"`} {
		_, err := Compile(src, Bool)
		if assert.Error(t, err, src) {
			assert.Regexp(t, "never true or false|expected bool", err.Error(), src)
		}
	}
	for _, src := range []string{"idx % 2 == 0", "idx", "flag"} {
		_, err := Compile(src, Bool)
		assert.NoError(t, err, src)
	}
	_, err := Compile("idx + 1", Any)
	assert.NoError(t, err, "a map may compute a number")
}
