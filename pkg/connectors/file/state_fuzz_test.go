package file

import (
	"testing"
)

// FuzzStateDecoders feeds arbitrary items to every decoder of the file
// sink's state (pending, in-progress and counter items): an error, never a
// panic.
func FuzzStateDecoders(f *testing.F) {
	f.Add(pending{Bucket: "b", Hidden: ".part-0-1.inprogress", Final: "part-0-1", Part: 1, Size: 10, Checkpoint: 3}.encode())
	f.Add(resumable{Bucket: "b", Hidden: ".x", Final: "part-0-2", Part: 2, Length: 7}.encode())
	f.Add(counters{Subtask: 1, Next: map[int]int64{1: 4}, Referenced: []string{"b/.x"}}.encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = decodePending(b)
		_, _ = decodeResumable(b)
		_, _ = decodeCounters(b)
	})
}
