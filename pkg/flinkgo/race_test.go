//go:build race

package flinkgo_test

// raceEnabled: the test binary was built with -race, so `go list -export
// -race` finds the export data that build left in the cache.
const raceEnabled = true
