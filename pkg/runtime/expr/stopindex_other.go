//go:build !amd64 || purego

package expr

// stopIndex: see stopindex.go.
func stopIndex(b []byte, from int) int { return stopIndexGo(b, from) }
