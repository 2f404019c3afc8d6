//go:build race

package kafkabroker

// raceEnabled: throughput figures under the race detector mean nothing.
const raceEnabled = true
