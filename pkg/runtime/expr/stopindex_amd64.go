//go:build !purego

package expr

// stopIndex: see stopindex.go.
//
//go:noescape
func stopIndex(b []byte, from int) int
