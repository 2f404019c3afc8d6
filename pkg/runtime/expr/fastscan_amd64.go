//go:build !purego

package expr

// fastScan: see fastScanGo. On amd64 it is written in assembly
// (fastscan_amd64.s): a member's key is three masked words, its digits
// and its string's bytes sixteen an instruction (SSE2), with no call and
// nothing spilled; the Go version spent about as much on the loop's
// registers as on the bytes.
//
//go:noescape
func fastScan(data []byte, i, pos int, shape []memberShape, out []found) (next, nextPos, n int, end bool)
