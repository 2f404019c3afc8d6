// Package eocheck is the exactly-once checker shared by the fault tests.
//
// Input records carry their identity: the split (a partition of the input)
// they come from, their sequence number within it and a checksum of both,
// encoded as one JSON object per record,
//
//	{"split":3,"seq":1042,"crc":"5d3b1f0e"}
//
// (Append writes it; the datagen source emits it with format: checked). An
// Expectation says which (split, seq) pairs the input held; Check reads
// only the committed output of a file sink — finished files, skipping every
// file and directory whose name starts with "." (in-progress and pending
// part files are hidden) — and reports, per split, what was lost,
// duplicated, out of order, corrupt or unexpected. Checker takes lines from
// any other output (a topic, a stream) the same way.
//
// Out of order has a narrow meaning because a file sink gives no order
// across files: records of one split are out of order when, within one
// file, a record's sequence number is lower than that of an earlier record
// of the same split in that file. A subtask writes a file from a single
// ordered stream, and a split is read by one source subtask at a time, so a
// restore (which starts new part files) never makes this legal. Equal
// numbers are duplicates, not disorder.
package eocheck

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"strconv"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Sum is the checksum of a record's identity: CRC-32C of split and seq as
// two big-endian 64-bit integers.
func Sum(split int, seq int64) uint32 {
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

// MaxLen bounds the length of an encoded record.
const MaxLen = len(prefixSplit) + 20 + len(prefixSeq) + 20 + len(prefixCRC) + 8 + len(suffix)

// Append appends the encoding of record (split, seq), without a newline.
func Append(dst []byte, split int, seq int64) []byte {
	dst = append(dst, prefixSplit...)
	dst = strconv.AppendInt(dst, int64(split), 10)
	dst = append(dst, prefixSeq...)
	dst = strconv.AppendInt(dst, seq, 10)
	dst = append(dst, prefixCRC...)
	sum := Sum(split, seq)
	for shift := 28; shift >= 0; shift -= 4 {
		dst = append(dst, hexDigits[sum>>uint(shift)&0xf])
	}
	return append(dst, suffix...)
}

// Errors of Parse; both make a line corrupt.
var (
	// ErrSyntax: the line is not a record in the encoding of Append.
	ErrSyntax = errors.New("not a checked record")
	// ErrChecksum: the line parses but its crc does not match split and seq.
	ErrChecksum = errors.New("checksum mismatch")
)

// Parse decodes one record (trailing "\n" or "\r\n" allowed). It accepts
// exactly the encoding Append writes.
func Parse(line []byte) (split int, seq int64, err error) {
	line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
	rest, ok := bytes.CutPrefix(line, []byte(prefixSplit))
	if !ok {
		return 0, 0, ErrSyntax
	}
	sp, rest, ok := cutInt(rest, prefixSeq)
	if !ok || sp != int64(int(sp)) {
		return 0, 0, ErrSyntax
	}
	sq, rest, ok := cutInt(rest, prefixCRC)
	if !ok {
		return 0, 0, ErrSyntax
	}
	hex, ok := bytes.CutSuffix(rest, []byte(suffix))
	if !ok || len(hex) != 8 {
		return 0, 0, ErrSyntax
	}
	var sum uint32
	for _, c := range hex {
		d := bytes.IndexByte([]byte(hexDigits), c)
		if d < 0 {
			return 0, 0, ErrSyntax
		}
		sum = sum<<4 | uint32(d)
	}
	if sum != Sum(int(sp), sq) {
		return int(sp), sq, fmt.Errorf("%w: split %d seq %d has crc %08x, want %08x", ErrChecksum, sp, sq, sum, Sum(int(sp), sq))
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
