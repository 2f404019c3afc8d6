package postgrescdc

import (
	"fmt"

	"github.com/jackc/pglogrepl"

	"github.com/flinkgo/flinkgo/pkg/state"
)

// stateList is the operator state list holding the position.
const stateList = "postgres-cdc"

// positionVersion is the position's item format.
const positionVersion = 1

// Phases of a source.
const (
	phaseSnapshot  = 1 // reading the tables in the slot's exported snapshot
	phaseStreaming = 2 // reading the slot
)

// position is the source's checkpointed state.
//
// Streaming: every transaction whose commit LSN is below lsn has been
// emitted in full (or touched none of the tables); of the transaction
// committed at txn (0: none), the first count changes have been emitted.
// A restore starts replication at lsn and skips what is below it, and the
// first count changes of txn: each change is emitted once relative to the
// checkpoint.
//
// Snapshot: lsn is the slot's consistent point; count is how many rows
// of the snapshot were emitted before the barrier (the snapshot itself
// cannot be resumed: see docs/postgres-cdc.md, "The initial snapshot").
type position struct {
	slot  string
	phase byte
	lsn   pglogrepl.LSN
	txn   pglogrepl.LSN
	count uint64
}

func (p position) encode() []byte {
	e := state.NewEncoder(positionVersion)
	e.String(p.slot)
	e.Byte(p.phase)
	e.Uvarint(uint64(p.lsn))
	e.Uvarint(uint64(p.txn))
	e.Uvarint(p.count)
	return e.Encoded()
}

func decodePosition(b []byte) (position, error) {
	d := state.NewDecoder("postgres-cdc position", b, positionVersion)
	p := position{slot: d.String(), phase: d.Byte()}
	p.lsn = pglogrepl.LSN(d.Uvarint())
	p.txn = pglogrepl.LSN(d.Uvarint())
	p.count = d.Uvarint()
	if err := d.Finish(); err != nil {
		return p, err
	}
	if p.phase != phaseSnapshot && p.phase != phaseStreaming {
		return p, state.Corrupt("postgres-cdc position", fmt.Sprintf("unknown phase %d", p.phase))
	}
	return p, nil
}

func (p position) String() string {
	if p.phase == phaseSnapshot {
		return fmt.Sprintf("snapshot at %s (%d rows emitted)", p.lsn, p.count)
	}
	if p.txn != 0 {
		return fmt.Sprintf("LSN %s (%d changes of the transaction committed at %s emitted)", p.lsn, p.count, p.txn)
	}
	return "LSN " + p.lsn.String()
}
