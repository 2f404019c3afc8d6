// The checked record format, which format: checked emits for the
// exactly-once checker of the fault tests (internal/eocheck): each record
// carries its identity, the split it comes from, its sequence number within
// it and a checksum of both, as one JSON object,
//
//	{"split":3,"seq":1042,"crc":"5d3b1f0e"}
//
// so a checker can tell lost, duplicated, reordered and corrupted records
// apart.

package datagen

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"strconv"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// checkedSum is the checksum of a record's identity: CRC-32C of split and seq as
// two big-endian 64-bit integers.
func checkedSum(split int, seq int64) uint32 {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(int64(split)))
	binary.BigEndian.PutUint64(b[8:], uint64(seq))
	return crc32.Checksum(b[:], castagnoli)
}

const (
	prefixSplit = `{"split":`
	prefixSeq   = `,"seq":`
	prefixCRC   = `,"crc":"`
	suffix      = `"}`
	hexDigits   = "0123456789abcdef"
)

// maxCheckedLen bounds the length of a checked record.
const maxCheckedLen = len(prefixSplit) + 20 + len(prefixSeq) + 20 + len(prefixCRC) + 8 + len(suffix)

// AppendChecked appends checked record (split, seq), without a newline.
func AppendChecked(dst []byte, split int, seq int64) []byte {
	dst = append(dst, prefixSplit...)
	dst = strconv.AppendInt(dst, int64(split), 10)
	dst = append(dst, prefixSeq...)
	dst = strconv.AppendInt(dst, seq, 10)
	dst = append(dst, prefixCRC...)
	sum := checkedSum(split, seq)
	for shift := 28; shift >= 0; shift -= 4 {
		dst = append(dst, hexDigits[sum>>uint(shift)&0xf])
	}
	return append(dst, suffix...)
}

// Errors of ParseChecked; both make a line corrupt.
var (
	// errNotChecked: the line is not a record in the encoding of
	// AppendChecked.
	errNotChecked = errors.New("not a checked record")
	// errChecksum: the line parses but its crc does not match split and seq.
	errChecksum = errors.New("checksum mismatch")
)

// ParseChecked decodes one checked record (trailing "\n" or "\r\n"
// allowed). It accepts exactly the encoding AppendChecked writes.
func ParseChecked(line []byte) (split int, seq int64, err error) {
	line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
	rest, ok := bytes.CutPrefix(line, []byte(prefixSplit))
	if !ok {
		return 0, 0, errNotChecked
	}
	sp, rest, ok := cutInt(rest, prefixSeq)
	if !ok || sp != int64(int(sp)) {
		return 0, 0, errNotChecked
	}
	sq, rest, ok := cutInt(rest, prefixCRC)
	if !ok {
		return 0, 0, errNotChecked
	}
	hex, ok := bytes.CutSuffix(rest, []byte(suffix))
	if !ok || len(hex) != 8 {
		return 0, 0, errNotChecked
	}
	var sum uint32
	for _, c := range hex {
		d := bytes.IndexByte([]byte(hexDigits), c)
		if d < 0 {
			return 0, 0, errNotChecked
		}
		sum = sum<<4 | uint32(d)
	}
	if sum != checkedSum(int(sp), sq) {
		return int(sp), sq, fmt.Errorf("%w: split %d seq %d has crc %08x, want %08x", errChecksum, sp, sq, sum, checkedSum(int(sp), sq))
	}
	return int(sp), sq, nil
}

// cutInt reads a decimal integer up to sep.
func cutInt(b []byte, sep string) (int64, []byte, bool) {
	i := bytes.Index(b, []byte(sep))
	if i <= 0 {
		return 0, nil, false
	}
	v, err := strconv.ParseInt(string(b[:i]), 10, 64)
	if err != nil || strconv.FormatInt(v, 10) != string(b[:i]) {
		return 0, nil, false
	}
	return v, b[i+len(sep):], true
}
