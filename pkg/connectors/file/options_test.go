package file

import (
	"testing"
	"time"

	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/stretchr/testify/require"
)

func TestOptionsErrorsAtTheirLines(t *testing.T) {
	_, err := engine.Compile(testRegistry, "job.yaml", []byte(`name: bad
checkpointing: {interval: 1s}
operators:
  - {uid: gen, type: datagen}
  - uid: out
    type: file
    from: [gen]
    path: ""
    bucket: "yyyy-ww"
    bucketTime: ingestion
    timezone: Mars/Olympus
    rolling:
      maxPartSize: 0
      rolloverInterval: 0s
      inactivityInterval: 1 fortnight
      onCheckPoint: true
    partPrefix: .hidden
    partSuffix: a/b
    format: xml
    maxOpenFiles: 0
`), engine.Defaults{})
	require.Error(t, err)
	msg := err.Error()
	t.Log(msg)
	for _, want := range []string{
		"job.yaml:8:11: operators[1].path: must name the output directory",
		"job.yaml:9:13: operators[1].bucket: pattern \"yyyy-ww\": unsupported pattern letter 'w'",
		`job.yaml:10:17: operators[1].bucketTime: must be processing or event, got "ingestion"`,
		`job.yaml:11:15: operators[1].timezone: unknown time zone "Mars/Olympus"`,
		"job.yaml:13:20: operators[1].rolling.maxPartSize: must be more than 0 bytes",
		"job.yaml:14:25: operators[1].rolling.rolloverInterval: must be more than 0",
		"job.yaml:15:27: operators[1].rolling.inactivityInterval:",
		`job.yaml:16:7: operators[1].rolling.onCheckPoint: unknown field "onCheckPoint"; did you mean "onCheckpoint"?`,
		"job.yaml:17:17: operators[1].partPrefix: must not start with '.'",
		"job.yaml:18:17: operators[1].partSuffix: must not contain '/'",
		`job.yaml:19:13: operators[1].format: must be line, json, csv or parquet, got "xml"`,
		"job.yaml:20:19: operators[1].maxOpenFiles: must be at least 1, got 0",
	} {
		require.Contains(t, msg, want)
	}
}

func TestOptionsRequirePathAndCheckpointing(t *testing.T) {
	_, err := engine.Compile(testRegistry, "job.yaml", []byte(`name: nopath
operators:
  - {uid: gen, type: datagen}
  - {uid: out, type: file, from: [gen]}
`), engine.Defaults{})
	require.ErrorContains(t, err, `missing required field "path"`)

	_, err = engine.Compile(testRegistry, "job.yaml", []byte(`name: unbounded
operators:
  - {uid: gen, type: datagen}
  - {uid: out, type: file, from: [gen], path: /tmp/x}
`), engine.Defaults{})
	require.ErrorContains(t, err, "job.yaml:4:")
	require.ErrorContains(t, err, "without checkpointing an unbounded job would leave every file hidden")
	require.ErrorContains(t, err, "enable checkpointing")

	// A bounded job commits at its end: no checkpointing needed.
	_, err = engine.Compile(testRegistry, "job.yaml", []byte(`name: bounded
operators:
  - {uid: gen, type: datagen, count: 10}
  - {uid: out, type: file, from: [gen], path: /tmp/x}
`), engine.Defaults{})
	require.NoError(t, err)
}

func TestOptionsRefuseTwoSinksWithTheSameFiles(t *testing.T) {
	_, err := engine.Compile(testRegistry, "job.yaml", []byte(`name: twice
checkpointing: {interval: 1s}
operators:
  - {uid: gen, type: datagen}
  - {uid: a, type: file, from: [gen], path: /tmp/x}
  - {uid: b, type: file, from: [gen], path: /tmp/x/}
  - {uid: c, type: file, from: [gen], path: /tmp/x, partPrefix: other}
`), engine.Defaults{})
	require.ErrorContains(t, err, `job.yaml:5:`)
	require.ErrorContains(t, err, `operator "b" writes part files to the same path`)
	require.ErrorContains(t, err, `job.yaml:6:`)
	require.NotContains(t, err.Error(), `job.yaml:7:`)
}

func TestOptionsDefaults(t *testing.T) {
	g, err := engine.Compile(testRegistry, "job.yaml", []byte(`name: ok
checkpointing: {interval: 1s}
operators:
  - {uid: gen, type: datagen}
  - {uid: out, type: file, from: [gen], path: /tmp/x, timezone: UTC,
     rolling: {maxPartSize: 1MiB, rolloverInterval: 5m, onCheckpoint: true}}
`), engine.Defaults{})
	require.NoError(t, err)
	s := g.Vertices[1].Plan.NewOperator().(*sink).set
	require.Equal(t, defaultBucket, s.bucket)
	require.Equal(t, "java", s.bucketKind)
	require.Equal(t, naming{Prefix: "part"}, s.naming)
	require.Equal(t, policy{MaxPartSize: 1 << 20, RolloverInterval: 5 * time.Minute, InactivityInterval: time.Minute, OnCheckpoint: true}, s.policy)
	require.Equal(t, formatLine, s.format)
	require.Equal(t, time.UTC, s.loc)
	require.False(t, s.eventTime)
	require.Equal(t, defaultMaxOpen, s.maxOpen)
}
