package checkpoint

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"
)

// FuzzDecodeMetadata: no input makes DecodeMetadata panic, and whatever it
// accepts encodes again to a file it accepts, the same after one round
// trip. With reframe set the length and checksum are recomputed around the
// input's body first, so the fuzzer gets past them into the JSON. The seed
// corpus in testdata/fuzz/FuzzDecodeMetadata runs with every `go test`:
//
//	go test ./internal/checkpoint -run '^$' -fuzz FuzzDecodeMetadata -fuzztime 1m
func FuzzDecodeMetadata(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte, reframe bool) {
		if reframe && len(data) >= len(metaMagic)+6 {
			body := data[len(metaMagic)+6:]
			data = frame(binary.LittleEndian.Uint16(data[len(metaMagic):]), body)
			data = append(data[:0:0], data...)
			binary.LittleEndian.PutUint32(data[len(data)-4:], crc32.Checksum(data[:len(data)-4], castagnoli))
		}
		m, err := DecodeMetadata(data)
		if err != nil {
			if m != nil {
				t.Fatalf("DecodeMetadata returned metadata and an error %v", err)
			}
			return
		}
		once, err := EncodeMetadata(m)
		if err != nil {
			t.Fatalf("decoded metadata does not encode: %v", err)
		}
		m2, err := DecodeMetadata(once)
		if err != nil {
			t.Fatalf("re-encoded metadata does not decode: %v", err)
		}
		twice, err := EncodeMetadata(m2)
		if err != nil {
			t.Fatalf("second encode: %v", err)
		}
		if !bytes.Equal(once, twice) {
			t.Fatalf("encoding is not stable after a round trip:\n%s\n%s", once, twice)
		}
	})
}
