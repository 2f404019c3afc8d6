package chaos

import (
	"context"
	"fmt"
	"testing"
	"time"

	natsclient "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/dev/natsserver"
	"github.com/flinkgo/flinkgo/internal/eocheck"
	"github.com/flinkgo/flinkgo/internal/fault"
	"github.com/flinkgo/flinkgo/internal/scorecard"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// TestNATSSinkPublishFaults covers nats.publish, the one connector fault
// point no connector test injects: a datagen → nats sink job against an
// embedded server fails publishes three times and restarts. The sink
// derives message ids from the checkpointed record count, so the stream
// drops the replays: every record is stored once. Order is not checked (a
// publish lost in flight is sent again after later ones were stored).
func TestNATSSinkPublishFaults(t *testing.T) {
	start := time.Now()
	srv, err := natsserver.Start(natsserver.Config{Listen: "127.0.0.1:0",
		Streams: []natsserver.Stream{{Name: "out", Subjects: []string{"out.>"}}}})
	require.NoError(t, err)
	defer func() { require.NoError(t, srv.Close()) }()

	in := fault.New(nil, fault.Rule{Point: "nats.publish", Action: fault.Error, Nth: 10, Every: 25, Times: 3})
	j, err := job{fs: vfs.NewMem(), faults: in, spec: fmt.Sprintf(`
name: chaos-nats
parallelism: 2
checkpointing: {interval: 25ms}
restartStrategy: {type: fixed-delay, attempts: 10, delay: 10ms}
operators:
  - {uid: gen, type: datagen, count: %d, rate: %d, format: checked}
  - {uid: out, type: nats, from: [gen], url: %s, subject: out.chaos}
`, crashRecords, crashRate, srv.URL())}.start()
	require.NoError(t, err)
	require.False(t, awaitEnd(j, 60*time.Second))
	require.Equal(t, api.StateFinished, j.State(), j.Info().Error)
	require.NoError(t, eocheck.FiredAll(in))

	r := readStream(t, srv.URL(), "out", eocheck.Datagen(2, 1, crashRecords))
	planned, fired := in.Planned()
	scorecard.Record(t, start, scorecard.Entry{Suite: "NATS sink publish failures", Faults: "nats.publish errors, restart and replay",
		Planned: planned, Fired: fired, Cases: 1, Records: r.Expected, Lost: r.Lost, Duplicated: r.Duplicated})
	t.Logf("%d publish failures, %d restarts: %s (%d reordered)", fired, j.Info().Restarts, r, r.OutOfOrder)
	require.True(t, r.Lost+r.Duplicated+r.Corrupt+r.Unexpected == 0, r.String())
}

// readStream checks every message of a stream.
func readStream(t *testing.T, url, stream string, e eocheck.Expectation) *eocheck.Report {
	t.Helper()
	nc, err := natsclient.Connect(url)
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, stream)
	require.NoError(t, err)
	info, err := st.Info(ctx)
	require.NoError(t, err)
	c := e.NewChecker()
	c.File("stream " + stream)
	for seq := info.State.FirstSeq; info.State.Msgs > 0 && seq <= info.State.LastSeq; seq++ {
		m, err := st.GetMsg(ctx, seq)
		require.NoError(t, err)
		c.Line(m.Data)
	}
	return c.Report()
}
