package filesource

import (
	"github.com/flinkgo/flinkgo/pkg/state"
)

// filesList is the operator state list of file positions (union: a
// restore gives every subtask every item, and each keeps its own files').
const filesList = "files"

// stateVersion is the format of an item of filesList.
const stateVersion = 1

// fileState is one file the subtask read to the end (done) or is reading.
type fileState struct {
	Path string // relative to the source's path, '/'-separated ("" when the path is the file)
	Done bool
	Pos  Position
}

func (s fileState) encode() []byte {
	e := state.NewEncoder(stateVersion)
	e.String(s.Path)
	e.Bool(s.Done)
	e.Varint(s.Pos.Offset)
	e.Varint(s.Pos.Records)
	return e.Encoded()
}

func decodeFileState(b []byte) (fileState, error) {
	d := state.NewDecoder("file source position", b, stateVersion)
	s := fileState{Path: d.String(), Done: d.Bool(), Pos: Position{Offset: d.Varint(), Records: d.Varint()}}
	if d.Err() == nil && (s.Pos.Offset < 0 || s.Pos.Records < 0) {
		d.Fail("negative position %+v of %q", s.Pos, s.Path)
	}
	return s, d.Finish()
}
