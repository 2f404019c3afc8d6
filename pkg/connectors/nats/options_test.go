package nats_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/api"
)

// specErrors compiles spec and returns its problems (none: nil).
func specErrors(t *testing.T, spec string) []api.FieldError {
	t.Helper()
	_, err := compileSpec(spec)
	if err == nil {
		return nil
	}
	var se *api.SpecError
	require.True(t, errors.As(err, &se), "want *api.SpecError, got %T: %v", err, err)
	return se.Errors
}

// requireRefused checks that spec is refused with one error at field, on
// line, whose message holds every fragment.
func requireRefused(t *testing.T, spec, field string, line int, fragments ...string) {
	t.Helper()
	errs := specErrors(t, spec)
	require.Len(t, errs, 1, "errors: %v", errs)
	e := errs[0]
	require.Equal(t, field, e.Field, e.Error())
	require.Equal(t, line, e.Pos.Line, e.Error())
	for _, f := range fragments {
		require.Contains(t, e.Msg, f)
	}
	t.Log(e.Error())
}

func TestRefuseAtLeastOnceQueueWithoutCheckpointing(t *testing.T) {
	requireRefused(t, `name: q
operators:
  - uid: in
    type: nats
    url: nats://127.0.0.1:4222
    stream: orders
    mode: queue
    durable: d
    queueSemantics: at-least-once
    maxBacklog: 300
  - {uid: out, type: discard, from: [in]}
`, "operators[0].queueSemantics", 9,
		"only when a checkpoint covering it completes", "no checkpointing",
		"receive maxBacklog (300) messages, never acknowledge them and then stall forever",
		"checkpointing: {interval: 10s}", "queueSemantics: at-most-once")
}

func TestRefuseBookmarkWithoutCheckpointing(t *testing.T) {
	spec := `name: b
operators:
  - uid: in
    type: nats
    url: nats://127.0.0.1:4222
    stream: orders
    mode: bookmark%s
  - {uid: out, type: discard, from: [in]}
`
	requireRefused(t, strings.Replace(spec, "%s", "", 1), "operators[0].mode", 7,
		"keeps the stream position (the bookmark) in checkpoints", "no checkpointing",
		"would never be saved", "bookmarks would pile up", "discardOn: emit", "at-most-once across restarts")
	requireRefused(t, strings.Replace(spec, "%s", "\n    discardOn: checkpoint", 1), "operators[0].discardOn", 8, "no checkpointing")
	// discardOn: emit needs no checkpointing, but a durable consumer.
	requireRefused(t, strings.Replace(spec, "%s", "\n    discardOn: emit", 1), "operators[0].durable", 3, "set durable")
	require.Empty(t, specErrors(t, strings.Replace(spec, "%s", "\n    discardOn: emit\n    durable: pos", 1)))
	require.Empty(t, specErrors(t, strings.Replace(spec, "%s", "\n    deliveryGuarantee: at-most-once\n    durable: pos", 1)))
	// With checkpointing it is the plain replay mode.
	require.Empty(t, specErrors(t, strings.Replace(strings.Replace(spec, "%s", "", 1), "name: b", "name: b\ncheckpointing: {interval: 1s}", 1)))
}

func TestRefuseShortAckWait(t *testing.T) {
	requireRefused(t, `name: q
checkpointing: {interval: 10s}
operators:
  - uid: in
    type: nats
    url: nats://127.0.0.1:4222
    stream: orders
    mode: queue
    durable: d
    queueSemantics: at-least-once
    ackWait: 500ms
  - {uid: out, type: discard, from: [in]}
`, "operators[0].ackWait", 11, "500ms is too short", "in-progress ack every ackWait/3", "redeliver", "at least 1s")
}

func TestSourceOptionErrors(t *testing.T) {
	head := "name: x\ncheckpointing: {interval: 1s}\noperators:\n  - {uid: out, type: discard, from: [in]}\n  - {uid: in, type: nats, url: \"nats://h:4222\", stream: s, "
	for _, tc := range []struct{ opts, field, msg string }{
		{"", "operators[1].mode", `missing required field "mode"`},
		{"mode: pull", "operators[1].mode", "must be bookmark"},
		{"mode: queue, queueSemantics: at-least-once", "operators[1].durable", "missing durable"},
		{"mode: queue, durable: d", "operators[1].queueSemantics", "missing queueSemantics"},
		{"mode: queue, durable: d, queueSemantics: exactly-once", "operators[1].queueSemantics", "must be at-least-once or at-most-once"},
		{"mode: queue, durable: a.b, queueSemantics: at-most-once", "operators[1].durable", "not a consumer name"},
		{"mode: queue, durable: d, queueSemantics: at-least-once, maxBacklog: 0", "operators[1].maxBacklog", "at least 1"},
		{"mode: queue, durable: d, queueSemantics: at-least-once, maxBacklog: 10, ackBatchSize: 20", "operators[1].ackBatchSize", "could never fill"},
		{"mode: queue, durable: d, queueSemantics: at-least-once, ackTimeout: 0s", "operators[1].ackTimeout", "more than 0"},
		{"mode: queue, durable: d, queueSemantics: at-most-once, ackTimeout: 1s", "operators[1].ackTimeout", "applies only with queueSemantics: at-least-once"},
		{"mode: queue, durable: d, queueSemantics: at-most-once, bookmark: now", "operators[1].bookmark", "applies only with mode: bookmark"},
		{"mode: bookmark, queueSemantics: at-most-once", "operators[1].queueSemantics", "applies only with mode: queue"},
		{"mode: bookmark, durable: d", "operators[1].durable", "applies only with mode: queue or discardOn: emit"},
		{"mode: bookmark, bookmark: yesterday", "operators[1].bookmark", "must be epoch"},
		{"mode: bookmark, bookmark: 0", "operators[1].bookmark", "must be epoch"},
		{"mode: bookmark, discardOn: ack", "operators[1].discardOn", "must be checkpoint"},
		{"mode: bookmark, discardOn: emit, durable: d, deliveryGuarantee: at-least-once", "operators[1].deliveryGuarantee", "which is at-most-once"},
		{"mode: bookmark, discardOn: checkpoint, deliveryGuarantee: at-most-once", "operators[1].deliveryGuarantee", "set discardOn: emit"},
		{"mode: bookmark, parallelism: 2", "operators[1].parallelism", "set parallelism: 1 on this operator"},
		{"mode: bookmark, format: xml", "operators[1].format", "must be raw or json"},
		{"mode: bookmark, onDecodeError: skip", "operators[1].onDecodeError", "applies only with format: json"},
		{"mode: bookmark, subject: 'a..b'", "operators[1].subject", "not a subject"},
		{"mode: bookmark, stream2: x", "operators[1].stream2", "unknown"},
	} {
		errs := specErrors(t, head+tc.opts+"}\n")
		require.Len(t, errs, 1, "%s: %v", tc.opts, errs)
		require.Equal(t, tc.field, errs[0].Field, "%s: %v", tc.opts, errs[0])
		require.Contains(t, errs[0].Msg, tc.msg, tc.opts)
		require.Equal(t, 5, errs[0].Pos.Line, tc.opts)
	}
	for _, ok := range []string{
		"mode: bookmark, bookmark: 42", "mode: bookmark, bookmark: now", "mode: bookmark, bookmark: '2024-05-01T12:00:00Z'",
		"mode: bookmark, subject: 'orders.>', format: json, onDecodeError: skip",
		"mode: queue, durable: d, queueSemantics: at-least-once, maxBacklog: 100, ackBatchSize: 100, ackTimeout: 1s, ackWait: 1m, parallelism: 3",
		"mode: queue, durable: d, queueSemantics: at-most-once, maxBacklog: 5",
	} {
		require.Empty(t, specErrors(t, head+ok+"}\n"), ok)
	}
}

func TestSourceURLInFlowMapping(t *testing.T) {
	// An unquoted URL in a flow mapping, the form of the examples.
	require.Empty(t, specErrors(t, `name: x
checkpointing: {interval: 1s}
operators:
  - {uid: in, type: nats, url: nats://127.0.0.1:4222, stream: s, mode: bookmark}
  - {uid: out, type: discard, from: [in]}
`))
}

func TestSinkOptionErrors(t *testing.T) {
	head := "name: x\ncheckpointing: {interval: 1s}\noperators:\n  - {uid: in, type: datagen}\n  - {uid: out, type: nats, from: [in], url: \"nats://h:4222\", "
	for _, tc := range []struct{ opts, field, msg string }{
		{"", "operators[1]", "missing subject"},
		{"subject: a, subjectExpr: '\"b\"'", "operators[1].subjectExpr", "not both"},
		{"subject: 'a.*'", "operators[1].subject", "no wildcards"},
		{"subjectExpr: '1 +'", "operators[1].subjectExpr", "cannot compile"},
		{"subject: a, publishTimeout: 0s", "operators[1].publishTimeout", "more than 0"},
	} {
		errs := specErrors(t, head+tc.opts+"}\n")
		require.Len(t, errs, 1, "%s: %v", tc.opts, errs)
		require.Equal(t, tc.field, errs[0].Field, "%s: %v", tc.opts, errs[0])
		require.Contains(t, errs[0].Msg, tc.msg, tc.opts)
	}
	require.Empty(t, specErrors(t, head+"subject: out.x, msgIdPrefix: p}\n"))
	require.Empty(t, specErrors(t, head+"subjectExpr: '\"out.\" + string(idx % 2)'}\n"))
}
