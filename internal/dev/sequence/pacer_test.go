package sequence

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestPacerSchedule(t *testing.T) {
	t0 := time.Unix(1000, 0)
	p := newPacer(100, t0) // one record every 10ms

	assert.Equal(t, t0, p.due(t0), "first record at once")
	p.sent = 5
	assert.Equal(t, t0.Add(50*time.Millisecond), p.due(t0), "absolute schedule, not relative to now")
	assert.Equal(t, t0.Add(50*time.Millisecond), p.due(t0.Add(120*time.Millisecond)),
		"behind by less than maxPacerLag: send now-ish, catch up")

	late := t0.Add(50*time.Millisecond + maxPacerLag + time.Second)
	assert.Equal(t, late, p.due(late), "far behind: no catch-up burst")
	p.sent = 6
	assert.Equal(t, late.Add(10*time.Millisecond), p.due(late), "schedule resumes from the stall")
}

func TestChunkSize(t *testing.T) {
	tests := []struct {
		rate float64
		want int64
	}{
		{0, MaxChunk},
		{1, 1},
		{99, 1},
		{1000, 10},
		{50_000, 500},
		{10_000_000, MaxChunk},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, ChunkSize(tt.rate), "rate %v", tt.rate)
	}
}
