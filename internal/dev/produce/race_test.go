//go:build race

package produce

// raceEnabled: throughput figures under the race detector mean nothing.
const raceEnabled = true
