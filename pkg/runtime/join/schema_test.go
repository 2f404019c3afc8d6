package join_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// Two sources with different schemas (so the operator's merged Schema is
// unknown) and one without.
const schemaHead = `name: bad
operators:
  - {uid: p, type: datagen, format: events, schema: {idx: int, user: string, ts: int}, eventTime: {maxOutOfOrderness: 1s}}
  - {uid: a, type: datagen, format: events, schema: {user: string, amount: int}, eventTime: {maxOutOfOrderness: 1s}}
  - {uid: u, type: datagen, format: events, eventTime: {maxOutOfOrderness: 1s}}
`

func compileProblems(t *testing.T, spec string) []string {
	t.Helper()
	_, err := engine.Compile(runtime.MustRegistry(testTypes...), "test.yaml", []byte(spec), engine.Defaults{})
	if err == nil {
		return nil
	}
	var se *api.SpecError
	require.True(t, errors.As(err, &se), "want a *api.SpecError, got %v", err)
	var out []string
	for _, fe := range se.Errors {
		msg := fe.Error()
		require.NotContains(t, msg, "\n", "one line per problem")
		out = append(out, msg)
	}
	return out
}

// Each side's key and its members in select, where and timestamp are
// checked against that side's own schema; all problems are reported at
// once, each at its line and field.
func TestJoinChecksEachSideSchema(t *testing.T) {
	got := compileProblems(t, schemaHead+`  - uid: j
    type: intervalJoin
    left: {from: p, key: idz}
    right: {from: a, key: usr}
    lower: 0s
    upper: 1s
    select: {x: left.idz, y: "right.amount + left.idx", z: right.idx}
    where: "left.user > 1"
    timestamp: left.tz
  - uid: w
    type: windowJoin
    left: {from: a, key: user}
    right: {from: p, key: user}
    window: {type: tumbling, size: 1s}
    select: {n: "left.amount", m: "right.user"}
    where: "right.idx + 1"
  - {uid: out, type: discard, from: [j, w, u]}
`)
	want := []string{
		`test.yaml:8:26: operators[3].left.key: cannot compile "idz": unknown field "idz"; did you mean "idx"? (the schema of source "p" has idx, ts, user)`,
		`test.yaml:9:27: operators[3].right.key: cannot compile "usr": unknown field "usr"; did you mean "user"? (the schema of source "a" has amount, user)`,
		`test.yaml:12:17: operators[3].select.x: cannot compile "left.idz": unknown field "idz" of left; did you mean "idx"? (the schema of source "p" has idx, ts, user)`,
		`test.yaml:12:60: operators[3].select.z: cannot compile "right.idx": unknown field "idx" of right (the schema of source "a" has amount, user)`,
		`test.yaml:13:12: operators[3].where: cannot compile "left.user > 1": invalid operation: > (mismatched types string and int)`,
		`test.yaml:14:16: operators[3].timestamp: cannot compile "left.tz": unknown field "tz" of left; did you mean "ts"? (the schema of source "p" has idx, ts, user)`,
		`test.yaml:21:12: operators[4].where: cannot compile "right.idx + 1": expected bool, but got int`,
	}
	require.Len(t, got, len(want), strings.Join(got, "\n"))
	for i := range want {
		assert.True(t, strings.HasPrefix(got[i], want[i]), "problem %d:\nwant %s\ngot  %s", i, want[i], got[i])
	}
}

// A side without a schema is not checked (its members may be anything);
// a self-join checks both sides
// against the one schema; a join whose members are all declared compiles.
func TestJoinSchemaWhereDeclared(t *testing.T) {
	require.Empty(t, compileProblems(t, schemaHead+`  - uid: j
    type: windowJoin
    left: {from: p, key: user}
    right: {from: u, key: usr}
    window: {type: tumbling, size: 1s}
    how: full
    select: {x: left.idx, y: right.whatever, k: key, s: windowStart}
    where: "left.ts > 0 || right.anything"
  - uid: s
    type: intervalJoin
    left: {from: p, key: user}
    right: {from: p, key: "upper(user)"}
    lower: -1s
    upper: 1s
    select: {x: "left.idx + right.idx", u: "right.user"}
    timestamp: "max(left.ts, right.ts)"
  - {uid: out, type: discard, from: [j, s, a]}
`))
	got := compileProblems(t, schemaHead+`  - uid: s
    type: intervalJoin
    left: {from: p, key: user}
    right: {from: p, key: user}
    lower: 0s
    upper: 1s
    select: {x: right.usr}
  - {uid: out, type: discard, from: [s, a, u]}
`)
	require.Len(t, got, 1, strings.Join(got, "\n"))
	assert.Contains(t, got[0], `operators[3].select.x: cannot compile "right.usr": unknown field "usr" of right; did you mean "user"? (the schema of source "p"`)
}
