//go:build race

package nats_test

// raceEnabled: the race detector slows everything down many times, so the
// throughput comparison is skipped under it.
const raceEnabled = true
