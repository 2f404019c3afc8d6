// Package join holds the stream joins: windowJoin (both sides keyed by their
// own expression, the same tumbling, sliding or session window on both
// sides, inner, left, right or full) and intervalJoin (right.ts within
// [left.ts+lower, left.ts+upper], inner or left outer). Both are written on
// the public process-function API (runtime.KeyedCoProcessFunction): their
// rows live in keyed state, in every checkpoint and savepoint, and move with
// their key groups on a restore at another parallelism; timers in keyed
// state fire windows and clean rows up as the watermark passes.
//
// Each side's records are hash-partitioned by the side's key expression
// (Plan.InputKeys): the join needs no keyBy before it. Rows later than the
// watermark allows are counted per side and sent to the side outputs
// lateLeft and lateRight, never dropped silently. The output of a match is
// a JSON object of the select expressions, which read the rows as left and
// right (left.id: member id of the left row; the missing side of an outer
// match reads as an empty object, so its members are null), and key,
// windowStart and windowEnd where they apply. See docs/joins.md.
package join
