package api

import (
	"errors"
	"testing"
)

// FuzzParseJob: whatever the bytes, ParseJob returns (never panics), every
// problem names the file, and a spec it accepts holds the invariants the
// runtime relies on (checkParsedInvariants). The seed corpus in
// testdata/fuzz/FuzzParseJob (derived from testdata/good and testdata/bad)
// runs with every `go test`; explore further with
//
//	go test ./pkg/api -run '^$' -fuzz FuzzParseJob -fuzztime 1m
func FuzzParseJob(f *testing.F) {
	f.Fuzz(func(t *testing.T, src []byte) {
		p := ParseJob("fuzz.yaml", src, fakeCatalog{})
		err := p.Dec.Errors.Err()
		if err == nil {
			checkParsedInvariants(t, p)
			return
		}
		var se *SpecError
		if !errors.As(err, &se) || len(se.Errors) == 0 {
			t.Fatalf("error %v is not a SpecError with problems", err)
		}
		for _, fe := range se.Errors {
			if fe.File != "fuzz.yaml" {
				t.Fatalf("problem without the file name: %v", fe)
			}
			if fe.Msg == "" {
				t.Fatalf("problem without a message: %v", fe)
			}
		}
	})
}
