//go:build !race

package nats_test

const raceEnabled = false
