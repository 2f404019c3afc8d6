package file

import (
	"math/rand/v2"
	"strconv"
	"strings"
)

// naming builds and parses part file names (Flink's OutputFileConfig):
//
//	finished:    <prefix>-<subtask>-<part><suffix>
//	in-progress: .<prefix>-<subtask>-<part><suffix>.inprogress.<random>
//
// <subtask> is the index of the subtask that allocated <part> from its
// counter, so the pair is unique within a job's lineage. The hidden form
// stays the file's name while it is in progress and pending; committing
// renames it to the finished form in the same directory.
type naming struct {
	Prefix string // default "part"
	Suffix string // default ""
}

const inProgressMarker = ".inprogress."

// Final is the finished name of part `part` of subtask index `index`.
func (n naming) Final(index int, part int64) string {
	b := make([]byte, 0, len(n.Prefix)+len(n.Suffix)+24)
	b = append(b, n.Prefix...)
	b = append(b, '-')
	b = strconv.AppendInt(b, int64(index), 10)
	b = append(b, '-')
	b = strconv.AppendInt(b, part, 10)
	b = append(b, n.Suffix...)
	return string(b)
}

// Hidden is the in-progress name for part `part` of index `index`, made
// unique by random (see randomSuffix).
func (n naming) Hidden(index int, part int64, random string) string {
	return "." + n.Final(index, part) + inProgressMarker + random
}

func randomSuffix() string { return strconv.FormatUint(rand.Uint64(), 36) }

// hiddenFinal returns the finished name belonging to a hidden name.
func hiddenFinal(hidden string) string {
	i := strings.LastIndex(hidden, inProgressMarker)
	if i < 1 || hidden[0] != '.' {
		return ""
	}
	return hidden[1:i]
}

// Parse recognises a part file name of this naming: its subtask index,
// part number and whether it is hidden (in-progress or pending). Names of
// other files, including parts written with another prefix or suffix,
// are not recognised (ok false) and are never touched.
func (n naming) Parse(name string) (index int, part int64, hidden, ok bool) {
	if strings.HasPrefix(name, ".") {
		final := hiddenFinal(name)
		if final == "" {
			return 0, 0, false, false
		}
		index, part, ok = n.parseFinal(final)
		return index, part, true, ok
	}
	index, part, ok = n.parseFinal(name)
	return index, part, false, ok
}

func (n naming) parseFinal(name string) (int, int64, bool) {
	rest, ok := strings.CutPrefix(name, n.Prefix+"-")
	if !ok {
		return 0, 0, false
	}
	if rest, ok = strings.CutSuffix(rest, n.Suffix); !ok {
		return 0, 0, false
	}
	idx, part, ok := strings.Cut(rest, "-")
	if !ok || !digits(idx) || !digits(part) {
		return 0, 0, false
	}
	i, err1 := strconv.Atoi(idx)
	p, err2 := strconv.ParseInt(part, 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return i, p, true
}

func digits(s string) bool {
	if s == "" || len(s) > 18 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
