package chaos

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/eocheck"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// The chained-reduce crash suite crashes a job whose keyed state lives in
// a chain: at parallelism 1 with chaining on, the keyBy, a reduce that
// counts each key's records, a filter and a map run on the source's
// goroutine (docs/chaining.md, "Keyed operators at parallelism 1"). The
// records are keyed by (seq-1) % 7, so the n-th record of a key has seq
// r+1+7(n-1); the filter keeps a record only when the reduce's count says
// so. A count restored from another checkpoint than the source's position
// (or not at all) drops records, which the checker finds lost; one
// counted twice is a duplicate. The map writes the checked record back
// for the file sink, whose pending files are restored with them. The
// reduce has a ttl (the records' timestamps are the wall clock's: an hour
// never passes), so it hears every watermark in the chain and keeps each
// key's last timestamp in its state: an accumulator swept or timed wrong
// after a restore resets its count, which the filter drops.
const chainedKeys = 7

func chainedReduceSpec(rate int) string {
	return fmt.Sprintf(`
name: chaos-chained-reduce
parallelism: 1
chaining: true
checkpointing: {interval: 25ms}
restartStrategy: {type: none}
operators:
  - {uid: gen, type: datagen, count: %d, rate: %d, format: checked, eventTime: {maxOutOfOrderness: 0s}}
  - {uid: key, type: keyBy, from: [gen], expr: "(seq - 1) %% %d"}
  - {uid: seen, type: reduce, from: [key], init: "{n: 0}", expr: "{split: split, seq: seq, crc: crc, n: acc.n + 1}", ttl: 1h}
  - {uid: inOrder, type: filter, from: [seen], expr: "seq == (seq - 1) %% %d + 1 + %d * (n - 1)"}
  - {uid: back, type: map, from: [inOrder], expr: '"{\"split\":" + string(split) + ",\"seq\":" + string(seq) + ",\"crc\":\"" + crc + "\"}"'}
  - {uid: out, type: file, from: [back], path: %s, bucket: none, rolling: {maxPartSize: 1KiB}}
`, crashRecords, rate, chainedKeys, chainedKeys, chainedKeys, outDir)
}

var chainedReduceWorkload = workload{name: "chained-reduce", spec: chainedReduceSpec, records: crashRecords, fileSinks: 1,
	check: func(fsys vfs.FS) (*eocheck.Report, error) {
		return checkOutput(fsys, eocheck.Datagen(1, 1, crashRecords))
	}}

func TestCrashAtEveryFaultPointChainedReduce(t *testing.T) {
	// Without a crash, the reduce is in the source's chain and every
	// record passes the filter.
	mem := vfs.NewMem()
	j, err := job{spec: chainedReduceSpec(0), fs: mem}.start()
	require.NoError(t, err)
	require.False(t, awaitEnd(j, 30*time.Second), "the job did not end")
	require.Equal(t, api.StateFinished, j.State(), j.Info().Error)
	chained := map[string]string{}
	for _, op := range j.Info().Operators {
		chained[op.UID] = op.ChainedTo
	}
	require.Equal(t, map[string]string{"gen": "", "key": "gen", "seen": "gen", "inOrder": "gen", "back": "gen", "out": ""}, chained)
	r, err := chainedReduceWorkload.check(mem)
	require.NoError(t, err)
	require.True(t, r.OK(), "%s", r)

	s := sweepSize()
	if s == sweepDefault {
		s = sweepShort // the file job's suite sweeps the hits; this one each point
	}
	crashSuite(t, chainedReduceWorkload, s, "crash at every fault point, chained keyed reduce job",
		"%d points x 2 crash models (process crash, power loss), keyed state in the source's chain, a reduce with a ttl hearing the watermark")
}
