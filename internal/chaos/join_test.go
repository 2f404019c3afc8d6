package chaos

import (
	"fmt"
	"testing"

	"github.com/flinkgo/flinkgo/internal/eocheck"
)

// The join crash suite crashes a job whose output goes through a window
// join at every fault point, as the file job's suite does. Two datagen
// sources emit the same checked records, each with its seq as its event
// time; the join pairs every left record with its right twin (the key is
// split and seq) within a 100 ms tumbling window, and writes the left one
// back into the file sink. Recovery must commit every record exactly
// once: the join's rows and timers, both sources' positions and the sink's
// pending files are restored together, and barriers align across the two
// inputs. The join emits a window's matches by key, so records are not in
// seq order within a file: the suite checks loss and duplication only.
func joinCrashSpec(rate int) string {
	side := func(uid string) string {
		return fmt.Sprintf(`{uid: %s, type: datagen, count: %d, rate: %d, format: checked, eventTime: {timestamp: seq, maxOutOfOrderness: 0s}}`,
			uid, crashRecords, rate)
	}
	return fmt.Sprintf(`
name: chaos-join
parallelism: 2
watermarkInterval: 5ms
checkpointing: {interval: 25ms}
restartStrategy: {type: none}
operators:
  - %s
  - %s
  - uid: join
    type: windowJoin
    left: {from: left, key: 'string(split) + ":" + string(seq)'}
    right: {from: right, key: 'string(split) + ":" + string(seq)'}
    window: {type: tumbling, size: 100ms}
    select: {split: left.split, seq: left.seq, crc: left.crc}
  - {uid: back, type: map, from: [join], expr: '"{\"split\":" + string(split) + ",\"seq\":" + string(seq) + ",\"crc\":\"" + crc + "\"}"'}
  - {uid: out, type: file, from: [back], path: %s, bucket: none, rolling: {maxPartSize: 1KiB}}
`, side("left"), side("right"), outDir)
}

// joinWorkload's output is the file job's records, but a join emits them
// by window, not in each split's order.
var joinWorkload = workload{name: "join", spec: joinCrashSpec, records: crashRecords, check: fileWorkload.check,
	exact: func(r *eocheck.Report) bool {
		return r.Lost == 0 && r.Duplicated == 0 && r.Corrupt == 0 && r.Unexpected == 0
	}}

func TestCrashAtEveryFaultPointJoin(t *testing.T) {
	s := sweepSize()
	if s == sweepDefault {
		s = sweepShort // the file job's suite sweeps the hits; this one each point
	}
	crashSuite(t, joinWorkload, s, "crash at every fault point, window join job",
		"%d points x 2 crash models (process crash, power loss), a job joining two sources")
}
