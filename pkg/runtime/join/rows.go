package join

import (
	"github.com/flinkgo/flinkgo/pkg/state"
)

// row is one record kept in join state: its event time, its value (a
// copy), and whether it matched (interval join, left outer).
type row struct {
	ts      int64
	value   []byte
	matched bool
}

// rows are the rows of one side of a key at one time slot: a pane or
// session start (window join), a timestamp (interval join). Handles hold
// pointers, so appending to a list found in state updates the state.
type rows struct{ list []row }

// sideStats counts one side's rows and value bytes in state, for metrics
// and savepoint inspect.
type sideStats struct {
	rows, bytes int64
}

func (s *sideStats) add(r row)    { s.rows++; s.bytes += int64(len(r.value)) }
func (s *sideStats) remove(r row) { s.rows--; s.bytes -= int64(len(r.value)) }

// rowsCodec encodes a rows list: version 1, uvarint count, then per row a
// varint timestamp, the value and the matched flag. Decoding happens only
// when restored state is declared, so the codec counts what it decodes
// into stats: a restored operator knows its state's size without walking
// every key.
type rowsCodec struct{ stats *sideStats }

const rowsVersion = 1

func (c rowsCodec) Append(dst []byte, rs *rows) []byte {
	e := state.NewEncoder(rowsVersion)
	e.Uvarint(uint64(len(rs.list)))
	for _, r := range rs.list {
		e.Varint(r.ts)
		e.Bytes(r.value)
		e.Bool(r.matched)
	}
	return append(dst, e.Encoded()...)
}

func (c rowsCodec) Decode(b []byte) (*rows, error) {
	d := state.NewDecoder("join rows", b, rowsVersion)
	n := d.Uvarint()
	rs := &rows{list: make([]row, 0, min(n, uint64(len(b))))}
	for i := uint64(0); i < n && d.Err() == nil; i++ {
		r := row{ts: d.Varint(), value: d.Bytes(), matched: d.Bool()}
		rs.list = append(rs.list, r)
	}
	if err := d.Finish(); err != nil {
		return nil, err
	}
	for i := range rs.list {
		rs.list[i].value = append([]byte(nil), rs.list[i].value...) // own the bytes: the state file's buffer goes
		if c.stats != nil {
			c.stats.add(rs.list[i])
		}
	}
	return rs, nil
}
