package runtime

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/flinkgo/flinkgo/pkg/api"
)

// What an operator does with a record it cannot process (its spec's
// onError; docs/errors.md).
const (
	// OnErrorFail (the default) fails the job; when the same record fails
	// again after the restart, the job is FAILED naming it (a poison
	// record) instead of restarting on it forever.
	OnErrorFail = api.OnErrorFail
	// OnErrorSkip counts the record (recordErrorsSkipped), logs the first
	// few with their position and goes on.
	OnErrorSkip = api.OnErrorSkip
	// OnErrorSideOutput sends the record, with its error, to the side
	// output ErrorOutput (from: [<uid>.errors]) and counts it
	// (recordErrorsToSideOutput).
	OnErrorSideOutput = api.OnErrorSideOutput
)

// ErrorOutput is the side output failing records go to under
// onError: sideOutput.
const ErrorOutput = "errors"

// Counters of records that failed and were not let fail the job.
const (
	MetricErrorsSkipped      = "recordErrorsSkipped"
	MetricErrorsToSideOutput = "recordErrorsToSideOutput"
)

// loggedRecordErrors bounds the skipped records logged per subtask.
const loggedRecordErrors = 5

// RecordFailure is the error of one record that failed an operator: what
// the job's error names and how a restart recognises the same record
// failing again. Its position (docs/errors.md): the operator and subtask,
// the checkpoint the attempt restored (0: none) and the record's ordinal
// in the subtask's input since then, counting from 1; its fingerprint
// hashes the record's key and value.
type RecordFailure struct {
	Operator    string
	Subtask     int
	Restored    int64
	Index       int64
	Fingerprint uint64
	// Value is the start of the record's value, for the message.
	Value string
	Err   error
	// Site names what failed when it was no input record of its own (Index
	// is then 0): a result the operator built from its state (ResultError)
	// or a timer it fired (TimerFailure), e.g. `event-time timer at 5000 of
	// key "k", the result of key "k" at 4999`. Content (Fingerprint) then
	// tells a later attempt's failure apart.
	Site string
}

func (f *RecordFailure) Error() string {
	if f.Site != "" {
		return fmt.Sprintf("%s (value %q): %v", f.Position(), f.Value, f.Err)
	}
	return fmt.Sprintf("record %d %s (value %q): %v", f.Index, f.since(), f.Value, f.Err)
}

func (f *RecordFailure) Unwrap() error { return f.Err }

// Position names the record: "17 of subtask 0 after checkpoint 3" (or
// "since the start" when the attempt restored nothing).
func (f *RecordFailure) Position() string {
	if f.Site != "" {
		return fmt.Sprintf("%s in subtask %d %s", f.Site, f.Subtask, f.since())
	}
	return fmt.Sprintf("%d of subtask %d %s", f.Index, f.Subtask, f.since())
}

func (f *RecordFailure) since() string {
	if f.Restored > 0 {
		return "after checkpoint " + strconv.FormatInt(f.Restored, 10)
	}
	return "since the start"
}

// Same reports whether g is f's record failing again in a later attempt.
// The operator, subtask and content must match. When both attempts
// restored the same checkpoint the replay is the same, so the ordinal
// must match too; after a newer checkpoint the ordinals count from
// another point and the content decides.
func (f *RecordFailure) Same(g *RecordFailure) bool {
	if f == nil || g == nil || f.Operator != g.Operator || f.Subtask != g.Subtask || f.Fingerprint != g.Fingerprint {
		return false
	}
	return f.Restored != g.Restored || f.Index == g.Index
}

// RecordError handles record i of batch b, which failed with err while
// the operator processed b (Process): as the operator's onError says, it
// returns the error to return from Process (a *RecordFailure naming the
// record), or nil after skipping the record or sending it to the errors
// side output through out, and the operator goes on with record i+1.
// Its position comes from the subtask's input count, so it must be called
// during the Process call that received b.
func (c *Context) RecordError(b *Batch, i int, out Output, err error) error {
	r := &b.Records[i]
	f := c.failure(fingerprint(r), r.Value, err)
	f.Index = int64(i) + 1
	if c.o.RecordsIn != nil {
		f.Index += c.o.RecordsIn.Load() - int64(len(b.Records))
	}
	return c.onError(f, r, out)
}

// ResultError handles a result the operator failed to build from what its
// state holds, while it processed a record or fired a timer: a join's
// select or where over a pair of rows or an outer row. r is the result's
// key and timestamp with, as its value, what it was built from (a JSON
// value: the dead letter carries it). As onError says: skip counts and
// logs it, sideOutput sends it to ErrorOutput, and both return nil (the
// operator goes on with its next result, its state unchanged by this
// one); fail returns a *RecordFailure, naming the result, for the
// operator to return (the engine adds the timer it fired, TimerFailure).
// A later attempt failing on the same result is a poison record.
func (c *Context) ResultError(r Record, out Output, err error) error {
	f := c.failure(fingerprint(&r), r.Value, err)
	f.Site = fmt.Sprintf("the result of key %q at %d", excerpt(r.Key), r.Timestamp)
	return c.onError(f, &r, out)
}

// TimerFailure is err, returned by the operator's OnTimer for the timer of
// domain d at ts of the current key, as a record failure naming that
// timer, so a timer that fails again after the restart is a poison record
// like an input record (the engine calls it). An error that suppresses
// restarts is left as it is.
func TimerFailure(c *Context, d TimeDomain, ts int64, err error) error {
	if err == nil || errors.Is(err, ErrRestartsSuppressed) {
		return err
	}
	site := fmt.Sprintf("%s timer at %d of key %q", d, ts, excerpt(c.CurrentKey()))
	if f, ok := AsRecordFailure(err); ok {
		g := *f
		g.Site = site + ", " + cmp.Or(f.Site, fmt.Sprintf("record %d", f.Index))
		return &g
	}
	r := Record{Key: c.CurrentKey(), Value: strconv.AppendInt(nil, ts, 10)}
	f := c.failure(fingerprint(&r), nil, err)
	f.Site = site
	return f
}

// failure is the failure of a record of fingerprint fp and value v in
// this subtask's attempt, without a position.
func (c *Context) failure(fp uint64, v []byte, err error) *RecordFailure {
	f := &RecordFailure{Operator: c.o.UID, Subtask: c.o.Subtask, Fingerprint: fp, Value: excerpt(v), Err: err}
	if c.o.Restored {
		f.Restored = c.o.RestoredCheckpoint
	}
	return f
}

// onError carries out the operator's onError for f, the failure of r.
func (c *Context) onError(f *RecordFailure, r *Record, out Output) error {
	switch c.o.OnError {
	case OnErrorSkip:
		c.recordSkipped(f)
		return nil
	case OnErrorSideOutput:
		if out == nil {
			return f // no operator reads the side output: refused at submit
		}
		c.o.Metrics.Counter(MetricErrorsToSideOutput).Add(1)
		out.EmitTo(ErrorOutput, deadLetter(r, f))
		return nil
	}
	return f
}

func (c *Context) recordSkipped(f *RecordFailure) {
	n := c.o.Metrics.Counter(MetricErrorsSkipped).Add(1)
	if c.skippedLogged < loggedRecordErrors {
		c.skippedLogged++
		ev := c.Log().Warn().Str("record", f.Position()).Str("value", f.Value).AnErr("error", f.Err).Int64("skipped", n)
		if c.skippedLogged == loggedRecordErrors {
			ev = ev.Bool("last_logged", true)
		}
		ev.Msg("record failed and skipped (onError: skip)")
	}
}

// deadLetter is the record the errors side output carries: a JSON object
// with the error, where it happened and the failed record's value
// (embedded as JSON when it is valid JSON, else as a string); key and
// timestamp stay the failed record's.
func deadLetter(r *Record, f *RecordFailure) Record {
	var value any = string(r.Value)
	if json.Valid(r.Value) {
		value = json.RawMessage(r.Value)
	}
	b, err := json.Marshal(struct {
		Error    string `json:"error"`
		Operator string `json:"operator"`
		Subtask  int    `json:"subtask"`
		Position string `json:"position"`
		Record   any    `json:"record"`
	}{f.Err.Error(), f.Operator, f.Subtask, f.Position(), value})
	if err != nil {
		panic(fmt.Sprintf("runtime: dead letter of %q cannot be encoded: %v (bug)", r.Value, err))
	}
	return Record{Key: r.Key, Value: b, Timestamp: r.Timestamp, Split: r.Split}
}

// fingerprint hashes a record's key and value: not its timestamp, which
// a source without event time sets from the clock, differently in every
// attempt.
func fingerprint(r *Record) uint64 {
	h := fnv.New64a()
	_, _ = h.Write(r.Key)
	_, _ = h.Write([]byte{0})
	_, _ = h.Write(r.Value)
	return h.Sum64()
}

// excerpt is the start of v, for messages.
func excerpt(v []byte) string {
	const max = 80
	s := string(v)
	if len(s) > max {
		s = strings.ToValidUTF8(s[:max], "") + "…"
	}
	return s
}

// AsRecordFailure returns the record failure err carries, if any.
func AsRecordFailure(err error) (*RecordFailure, bool) {
	var f *RecordFailure
	ok := errors.As(err, &f)
	return f, ok
}

// BadRecord marks err, returned by a KeyedProcessFunction's
// ProcessElement, as about that record alone and returned before the
// function changed any state for it: the adapter (KeyedProcess) hands it
// to RecordError, so the operator's onError applies (set Plan.OnError).
func BadRecord(err error) error { return &badRecord{err} }

type badRecord struct{ err error }

func (b *badRecord) Error() string { return b.err.Error() }
func (b *badRecord) Unwrap() error { return b.err }
