// Package splitmix holds splitmix64, the pseudo-random mix of the
// generators (datagen's events, nexmark): cheap, bijective, and its outputs
// for consecutive inputs pass statistical tests, so a record can be a pure
// function of its index.
package splitmix

import "math/bits"

// Golden is splitmix64's increment (2^64 / φ).
const Golden = 0x9e3779b97f4a7c15

// Mix is splitmix64's finalizer.
func Mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// Below maps h uniformly onto [0, span) (Lemire's multiply-shift: no
// division).
func Below(h, span uint64) uint64 {
	hi, _ := bits.Mul64(h, span)
	return hi
}
