package engine

import (
	"time"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// info returns the subtask's figures; wall is the time the watermark lag is
// measured against.
func (t *subtask) info(wall time.Time) api.SubtaskInfo {
	busy, bp, idle := t.chainSpent()
	si := api.SubtaskInfo{Index: t.index, RecordsIn: t.recordsIn.Load(), RecordsOut: t.recordsOut.Load(),
		AccumulatedBusyTimeMs: busy / 1e6, AccumulatedBackPressuredTimeMs: bp / 1e6, AccumulatedIdleTimeMs: idle / 1e6}
	si.InputWatermark, si.OutputWatermark, si.WatermarkLagMs = watermarkFigures(t.clock.inWM.Load(), t.clock.outWM.Load(), wall)
	return si
}

// watermarkFigures turns input and output watermarks into what info shows:
// nil before the first, and the output watermark's lag behind wall until
// the final one.
func watermarkFigures(in, out int64, wall time.Time) (inWM, outWM, lagMs *int64) {
	if in != runtime.MinWatermark {
		inWM = &in
	}
	if out != runtime.MinWatermark {
		outWM = &out
		if out != runtime.MaxWatermark {
			lag := max(wall.UnixMilli()-out, 0)
			lagMs = &lag
		}
	}
	return inWM, outWM, lagMs
}
