//go:build !race

package flinkgo_test

const raceEnabled = false
