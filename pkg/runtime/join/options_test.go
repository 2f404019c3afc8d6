package join_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

const badHead = `name: bad
operators:
  - {uid: p, type: datagen, format: events, eventTime: {maxOutOfOrderness: 1s}}
  - {uid: a, type: datagen, format: events, eventTime: {maxOutOfOrderness: 1s}}
`

// Bad join options are reported at their line and field, all at once.
func TestBadJoinSpecs(t *testing.T) {
	reg := runtime.MustRegistry(testTypes...)
	for _, c := range []struct{ name, join, want string }{
		{"unknown how", `
  - uid: j
    type: windowJoin
    left: {from: p, key: user}
    right: {from: a, key: user}
    window: {type: tumbling, size: 1s}
    how: outer
    select: {x: left.idx}`, "test.yaml:11:10: operators[2].how: must be inner, left, right, full, got \"outer\""},
		{"dangling side", `
  - uid: j
    type: windowJoin
    left: {from: p, key: user}
    right: {from: nope, key: user}
    window: {type: tumbling, size: 1s}
    select: {x: left.idx}`, `test.yaml:9:19: operators[2].right.from: no operator has uid "nope"`},
		{"from beside left and right", `
  - uid: j
    type: intervalJoin
    from: [p]
    left: {from: p, key: user}
    right: {from: a, key: user}
    lower: 0s
    upper: 1s
    select: {x: left.idx}`, `operators[2].from: "j" (type intervalJoin) takes its inputs from left.from and right.from; remove from`},
		{"missing right", `
  - uid: j
    type: windowJoin
    left: {from: p, key: user}
    window: {type: tumbling, size: 1s}
    select: {x: left.idx}`, `operators[2]: "j" (type windowJoin) needs right: {from: <uid of an upstream operator>, …}`},
		{"side without from", `
  - uid: j
    type: windowJoin
    left: {from: p, key: user}
    right: {key: user}
    window: {type: tumbling, size: 1s}
    select: {x: left.idx}`, `operators[2].right: right needs from: the uid of its upstream operator`},
		{"bad key", `
  - uid: j
    type: windowJoin
    left: {from: p, key: "user +"}
    right: {from: a, key: user}
    window: {type: tumbling, size: 1s}
    select: {x: left.idx}`, `operators[2].left.key: cannot compile "user +"`},
		{"bare member name", `
  - uid: j
    type: windowJoin
    left: {from: p, key: user}
    right: {from: a, key: user}
    window: {type: tumbling, size: 1s}
    select: {x: idx}`, `operators[2].select.x: cannot compile "idx": unknown name "idx": an expression here reads the rows left, right and key, windowStart, windowEnd; write left.idx or right.idx`},
		{"upper below lower", `
  - uid: j
    type: intervalJoin
    left: {from: p, key: user}
    right: {from: a, key: user}
    lower: 5s
    upper: -5s
    select: {x: left.idx}`, `operators[2].upper: must not be below lower (5s), got -5s`},
		{"right outer interval", `
  - uid: j
    type: intervalJoin
    left: {from: p, key: user}
    right: {from: a, key: user}
    lower: 0s
    upper: 1s
    how: right
    select: {x: left.idx}`, `operators[2].how: must be inner, left, got "right"`},
		{"no upper, no until", `
  - uid: j
    type: intervalJoin
    left: {from: p, key: user}
    right: {from: a, key: user}
    lower: 0s
    select: {x: left.idx}`, `operators[2].upper: is missing: the latest right time a left row matches`},
		{"until reads right", `
  - uid: j
    type: intervalJoin
    left: {from: p, key: user}
    right: {from: a, key: user}
    lower: 0s
    until: right.ts + 5
    select: {x: left.idx}`, `operators[2].until: "right.ts + 5" reads the right row; until bounds a left row when it arrives, so it reads only left`},
		{"until does not compile", `
  - uid: j
    type: intervalJoin
    left: {from: p, key: user}
    right: {from: a, key: user}
    lower: 0s
    upper: 1s
    until: "left.ts +"
    select: {x: left.idx}`, `operators[2].until: cannot compile "left.ts +"`},
		{"bad window", `
  - uid: j
    type: windowJoin
    left: {from: p, key: user}
    right: {from: a, key: user}
    window: {type: sliding, size: 1s}
    select: {x: left.idx}`, `operators[2].window.slide: a sliding window needs slide`},
		{"bad select", `
  - uid: j
    type: windowJoin
    left: {from: p, key: user}
    right: {from: a, key: user}
    window: {type: tumbling, size: 1s}
    select: {x: "left.idx +"}`, `operators[2].select.x: cannot compile "left.idx +"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec := badHead + c.join + "\n  - {uid: out, type: discard, from: [j]}\n"
			_, err := engine.Compile(reg, "test.yaml", []byte(spec), engine.Defaults{})
			require.Error(t, err)
			require.Contains(t, err.Error(), c.want)
			require.NotContains(t, err.Error(), "\n | ", "one line per error, no caret drawing")
		})
	}
}
