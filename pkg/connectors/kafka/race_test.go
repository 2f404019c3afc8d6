//go:build race

package kafka_test

// raceEnabled: throughput figures under the race detector mean nothing.
const raceEnabled = true
