package file

import "time"

// policy decides when an in-progress part file is rolled: closed and
// turned into a pending file, committed by the next completed checkpoint.
// It is Flink's DefaultRollingPolicy (size, rollover interval, inactivity),
// plus its OnCheckpointRollingPolicy when OnCheckpoint is set (the size
// and time limits still apply then).
type policy struct {
	MaxPartSize        int64         // roll once a part holds this many bytes
	RolloverInterval   time.Duration // roll a part open this long
	InactivityInterval time.Duration // roll a part not written for this long
	OnCheckpoint       bool          // roll every part at every checkpoint
}

// defaultPolicy is Flink's DefaultRollingPolicy defaults.
var defaultPolicy = policy{MaxPartSize: 128 << 20, RolloverInterval: 60 * time.Second, InactivityInterval: 60 * time.Second}

// rollOnWrite: after a record was written.
func (p policy) rollOnWrite(size int64) bool { return size >= p.MaxPartSize }

// rollOnTime: checked periodically and at checkpoints.
func (p policy) rollOnTime(f *partFile, now time.Time) bool {
	return now.Sub(f.created) >= p.RolloverInterval || now.Sub(f.lastWrite) >= p.InactivityInterval
}

// rollOnCheckpoint: at a barrier, before the part is recorded as resumable.
func (p policy) rollOnCheckpoint(f *partFile, now time.Time) bool {
	return p.OnCheckpoint || p.rollOnWrite(f.size) || p.rollOnTime(f, now)
}
