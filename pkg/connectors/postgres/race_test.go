//go:build race

package postgres_test

// raceEnabled: throughput figures under the race detector mean nothing.
const raceEnabled = true
