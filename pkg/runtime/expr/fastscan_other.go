//go:build !amd64 || purego

package expr

// fastScan: see fastScanGo.
func fastScan(data []byte, i, pos int, shape []memberShape, out []found) (next, nextPos, n int, end bool) {
	return fastScanGo(data, i, pos, shape, out)
}
