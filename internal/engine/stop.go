package engine

import (
	"fmt"

	"github.com/flinkgo/flinkgo/internal/checkpoint"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// prepareStop tells an operator that snapshot b is a stop-with-savepoint
// (runtime.StopPreparer), before it snapshots. A drained stop and the
// final checkpoint of a bounded job need nothing: end of input already
// finished the operators.
func (t *subtask) prepareStop(b Barrier) error {
	if b.Kind != checkpoint.StopSavepoint {
		return nil
	}
	var p runtime.StopPreparer
	if t.src != nil {
		p, _ = t.src.(runtime.StopPreparer)
	} else {
		p, _ = t.op.(runtime.StopPreparer)
	}
	if p == nil {
		return nil
	}
	if err := p.PrepareStop(b.ID); err != nil {
		t.exec.decline(t, b.ID, err)
		return fmt.Errorf("prepare stop-with-savepoint %d: %w", b.ID, err)
	}
	return nil
}
