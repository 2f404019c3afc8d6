package file

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/flinkgo/flinkgo/pkg/connectors/internal/csvrow"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/runtime/jsonstring"
)

// format is how a record becomes bytes in a part file.
type format uint8

const (
	// formatLine writes the record's value and a newline (Flink's
	// SimpleStringEncoder). A value holding newlines spans several lines.
	formatLine format = iota + 1
	// formatJSON writes one JSON object per line:
	// {"value":…,"key":…,"timestamp":…}; the value is embedded as JSON
	// (compacted onto one line) when it is valid JSON, else as a string;
	// key is a string or null, timestamp Unix ms or null when unknown.
	formatJSON
	// formatCSV writes one CSV row per record, a JSON object, with the
	// columns the sink names (package csvrow), each part file starting
	// with the header row unless header is false.
	formatCSV
	// formatParquet writes each part as one Parquet file (parquet.go):
	// the members of each record's JSON object are its columns.
	formatParquet
)

func (f format) String() string {
	switch f {
	case formatLine:
		return "line"
	case formatJSON:
		return "json"
	case formatCSV:
		return "csv"
	case formatParquet:
		return "parquet"
	}
	return "unknown"
}

// encoder writes records into a part's buffer without allocating (a
// scratch buffer is reused for JSON records larger than the free space).
type encoder struct {
	format  format
	scratch []byte
	compact bytes.Buffer
	csv     *csvrow.Row // formatCSV
	header  []byte      // formatCSV: the first bytes of every part file (nil: none)
}

// newEncoder returns the encoder of the sink's settings.
func newEncoder(c csvOptions, f format) encoder {
	e := encoder{format: f}
	if f == formatCSV {
		e.csv = csvrow.NewRow(c.columns, c.delim)
		if c.header {
			e.header = csvrow.Header(nil, c.columns, c.delim)
		}
	}
	return e
}

// csvOptions are the settings of format csv.
type csvOptions struct {
	columns []string
	delim   byte
	header  bool
}

// write appends r to w and returns the number of bytes written.
func (e *encoder) write(w *bufio.Writer, r *runtime.Record) (int, error) {
	if e.format == formatCSV {
		row, err := e.csv.Append(e.scratch[:0], r.Value)
		e.scratch = row[:0]
		if err != nil {
			return 0, &recordError{err}
		}
		return w.Write(row)
	}
	if e.format == formatLine {
		n, err := w.Write(r.Value)
		if err != nil {
			return n, err
		}
		return n + 1, w.WriteByte('\n')
	}
	// Worst case: every byte escaped as \u00XX, plus the frame.
	need := 6*(len(r.Value)+len(r.Key)) + 64
	var buf []byte
	switch {
	case w.Available() >= need:
		buf = w.AvailableBuffer()
	case w.Size() >= need:
		if err := w.Flush(); err != nil {
			return 0, err
		}
		buf = w.AvailableBuffer()
	default:
		buf = e.scratch[:0]
	}
	buf = e.appendJSON(buf, r)
	if cap(buf) > cap(e.scratch) && w.Size() < need {
		e.scratch = buf[:0]
	}
	return w.Write(buf)
}

func (e *encoder) appendJSON(dst []byte, r *runtime.Record) []byte {
	dst = append(dst, `{"value":`...)
	switch {
	case r.Value == nil: // no value (a Kafka tombstone); an empty one is ""
		dst = append(dst, "null"...)
	case !json.Valid(r.Value):
		dst = jsonstring.AppendBytes(dst, r.Value)
	case bytes.ContainsAny(r.Value, "\r\n"):
		e.compact.Reset()
		_ = json.Compact(&e.compact, r.Value) // valid: cannot fail
		dst = append(dst, e.compact.Bytes()...)
	default:
		dst = append(dst, bytes.TrimSpace(r.Value)...)
	}
	dst = append(dst, `,"key":`...)
	if r.Key == nil {
		dst = append(dst, "null"...)
	} else {
		dst = jsonstring.AppendBytes(dst, r.Key)
	}
	dst = append(dst, `,"timestamp":`...)
	if r.Timestamp == 0 {
		dst = append(dst, "null"...)
	} else {
		dst = strconv.AppendInt(dst, r.Timestamp, 10)
	}
	return append(dst, "}\n"...)
}

// recordError is an encoder's error about the record itself (not the
// file): the sink reports it through the operator's onError.
type recordError struct{ err error }

func (e *recordError) Error() string { return e.err.Error() }
func (e *recordError) Unwrap() error { return e.err }
