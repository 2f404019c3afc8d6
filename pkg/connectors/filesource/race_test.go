//go:build race

package filesource

const raceEnabled = true
