package checkpoint

import (
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func sampleMetadata() *Metadata {
	return &Metadata{
		JobID:           "0123456789abcdef",
		JobName:         "kafka-to-files",
		CheckpointID:    42,
		Kind:            Periodic.String(),
		Timestamp:       time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.UTC),
		DurationMs:      1500,
		SpecFingerprint: "deadbeefcafebabe",
		Spec:            "name: kafka-to-files\noperators: []\n",
		MaxParallelism:  128,
		Operators: []OperatorState{
			{UID: "in", Type: "kafka", Parallelism: 2, Subtasks: []Handle{
				{Subtask: 0, File: "in-0.state", Size: 100, Checksum: 0xdeadbeef, Lists: map[string]int{"offsets": 3}},
				{Subtask: 1, File: "in-1.state", Size: 200, Checksum: 1, Details: map[string]any{"partitions": []any{"0", "1"}}},
			}},
			{UID: "count", Type: "count", Parallelism: 1, Subtasks: []Handle{
				{Subtask: 0, File: "count-0.state", Size: 4096, Checksum: 2, Keys: 77, KeyStart: 0, KeyEnd: 128},
			}},
			{UID: "out", Type: "print", Parallelism: 1},
		},
		Extra: map[string]any{"note": "hello", "n": 1.5},
	}
}

func TestMetadataRoundTrip(t *testing.T) {
	m := sampleMetadata()
	data, err := EncodeMetadata(m)
	require.NoError(t, err)
	assert.Equal(t, metaMagic, string(data[:len(metaMagic)]), "the magic comes first")
	assert.Equal(t, uint16(MetadataVersion), binary.LittleEndian.Uint16(data[len(metaMagic):]), "then the version")
	got, err := DecodeMetadata(data)
	require.NoError(t, err)
	assert.Equal(t, m, got)

	// The body is JSON a person (or jq) can read.
	n := binary.LittleEndian.Uint32(data[len(metaMagic)+2:])
	var body map[string]any
	require.NoError(t, json.Unmarshal(data[len(metaMagic)+6:len(metaMagic)+6+int(n)], &body))
	assert.Equal(t, "kafka-to-files", body["jobName"])

	assert.Equal(t, int64(4396), m.Size())
	assert.Equal(t, int64(300), m.Operator("in").Size())
	assert.Equal(t, int64(77), m.Operator("count").Keys())
	assert.Zero(t, m.Operator("out").Size())
	assert.Nil(t, m.Operator("nope"))
}

// frame builds a _metadata file around body, with a correct length and
// checksum unless told otherwise.
func frame(version uint16, body []byte) []byte {
	out := append([]byte(metaMagic), 0, 0, 0, 0, 0, 0)
	binary.LittleEndian.PutUint16(out[len(metaMagic):], version)
	binary.LittleEndian.PutUint32(out[len(metaMagic)+2:], uint32(len(body)))
	out = append(out, body...)
	return binary.LittleEndian.AppendUint32(out, crc32.Checksum(out, castagnoli))
}

func TestDecodeMetadataErrors(t *testing.T) {
	valid, err := EncodeMetadata(sampleMetadata())
	require.NoError(t, err)
	body := valid[len(metaMagic)+6 : len(valid)-4]
	flip := func(i int) []byte {
		b := append([]byte(nil), valid...)
		b[i] ^= 0x20
		return b
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "empty or truncated"},
		{"a state file", []byte("FGSTATE\n\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00"), "not a flinkgo _metadata file (bad magic): is this path a flinkgo savepoint or checkpoint?"},
		{"json", []byte(`{"jobId": "x"}`), "bad magic"},
		{"magic only", []byte(metaMagic), "_metadata is truncated (8 bytes): the snapshot was not completely written"},
		{"header only", valid[:len(metaMagic)+6], "truncated"},
		{"cut in the body", valid[:len(valid)/2], "_metadata is truncated or has trailing bytes"},
		{"checksum cut", valid[:len(valid)-1], "truncated or has trailing bytes"},
		{"trailing bytes", append(append([]byte(nil), valid...), '\n'), "truncated or has trailing bytes"},
		{"length too long", frame(1, body)[:len(valid)-4], "truncated"},
		{"version 0", frame(0, body), "_metadata format version 0 is not supported by this flinkgo (it reads version 1): the snapshot was written by a different flinkgo release"},
		{"version 2", frame(2, body), "format version 2 is not supported"},
		{"flipped body byte", flip(len(metaMagic) + 6 + 10), "_metadata checksum mismatch: the file is corrupt"},
		{"flipped checksum", flip(len(valid) - 1), "checksum mismatch"},
		{"not json", frame(1, []byte("name: yaml")), "_metadata body is malformed"},
		{"wrong json type", frame(1, []byte(`{"checkpointId": "one"}`)), "_metadata body is malformed"},
		{"no max parallelism", frame(1, []byte(`{"jobId": "x"}`)), "_metadata is malformed: maxParallelism 0"},
		{"negative max parallelism", frame(1, []byte(`{"maxParallelism": -1}`)), "maxParallelism -1"},
		{"max parallelism above 32768", frame(1, []byte(`{"maxParallelism": 32769}`)), "maxParallelism 32769"},
		// Restore sizes slices by parallelism: these must not reach it.
		{"operator parallelism 0", frame(1, []byte(`{"maxParallelism": 128, "operators": [{"uid": "a"}]}`)),
			`_metadata is malformed: operator "a" has parallelism 0 (maxParallelism 128)`},
		{"operator parallelism negative", frame(1, []byte(`{"maxParallelism": 128, "operators": [{"uid": "a", "parallelism": -3}]}`)), "parallelism -3"},
		{"operator parallelism above max", frame(1, []byte(`{"maxParallelism": 128, "operators": [{"uid": "a", "parallelism": 1000000000000}]}`)), "parallelism 1000000000000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := DecodeMetadata(tc.data)
			require.Error(t, err)
			assert.Nil(t, m)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestDecodeMetadataEveryCorruption: every truncation and every flipped
// byte is rejected.
func TestDecodeMetadataEveryCorruption(t *testing.T) {
	valid, err := EncodeMetadata(sampleMetadata())
	require.NoError(t, err)
	for n := 0; n < len(valid); n++ {
		_, err := DecodeMetadata(valid[:n])
		require.Error(t, err, "truncated to %d bytes", n)
	}
	for i := range valid {
		b := append([]byte(nil), valid...)
		b[i] ^= 0x01
		_, err := DecodeMetadata(b)
		require.Error(t, err, "flipped byte %d", i)
		if i >= len(metaMagic) && i < len(metaMagic)+2 {
			assert.Contains(t, err.Error(), "version", "byte %d is the version", i)
		}
	}
}

// TestHandleJSON: the runtime-only fields of a handle are not persisted.
func TestHandleJSON(t *testing.T) {
	b, err := json.Marshal(Handle{Task: 3, UID: "x", Subtask: 1, File: "x-1.state", Size: 9, Checksum: 7})
	require.NoError(t, err)
	assert.JSONEq(t, `{"subtask":1,"file":"x-1.state","size":9,"checksum":7}`, string(b))
}
