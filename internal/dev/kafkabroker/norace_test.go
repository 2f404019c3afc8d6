//go:build !race

package kafkabroker

const raceEnabled = false
