package engine

import (
	"time"

	"github.com/flinkgo/flinkgo/pkg/api"
)

// failureStreak remembers the first failure since the job last made
// progress (completed a checkpoint): when a broker outage first fails a
// source's fetching and then every restart's connect, the last error says
// only "connection refused" and the first says what happened.
type failureStreak struct {
	first string
	at    time.Time
	n     int
}

// failed records a failure at t.
func (s *failureStreak) failed(err error, t time.Time) {
	if s.n == 0 {
		s.first, s.at = err.Error(), t
	}
	s.n++
}

// progress ends the streak: a checkpoint completed.
func (s *failureStreak) progress() { s.n = 0 }

// describe puts the streak's root cause into info (nothing when the job
// made progress since its last failure).
func (s *failureStreak) describe(info *api.JobInfo) {
	if s.n == 0 {
		return
	}
	t := s.at
	info.RootCause, info.RootCauseTime, info.Failures = s.first, &t, s.n
}
