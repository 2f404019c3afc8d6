//go:build !race

package produce

const raceEnabled = false
