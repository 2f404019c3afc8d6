package runtime

import (
	"maps"
	"slices"
	"strconv"
)

// StateMeaning says what an operator's snapshotted state means: the values
// of its options (and, for a keyed operator, the key expression feeding it)
// that its state was written under and is only read correctly with. A
// snapshot records it for each operator; a restore compares the recorded
// meaning with the job's (CompareMeaning) and refuses a change that would
// misread the state, such as a window's size (panes cut at 10 s read as
// 1 m windows) or a file sink's path (pending part files named relative
// to it).
type StateMeaning struct {
	// Version is the operator type's state schema version: raise it when
	// this build can no longer read the state an earlier one wrote, so a
	// snapshot of the other layout is refused with a reason instead of
	// being misread (a layout whose encoding carries its own version that
	// the decoder reads needs no raise). 0: unversioned.
	Version int
	// Values are what the state depends on, by name (normalized: equal
	// meanings have equal strings).
	Values map[string]string
	// Judge, when set, decides a changed value (was != now, either may be
	// "" for a value one side does not have) the operator type knows more
	// about: safe reports that the state reads correctly under the new
	// value, and why says why it is safe or what it would misread. nil, or
	// an empty why: every change is refused with a general reason.
	Judge func(name, was, now string) (safe bool, why string)
}

// With returns a copy of m with name set to value (a nil m is an
// unversioned meaning with that one value).
func (m *StateMeaning) With(name, value string) *StateMeaning {
	out := &StateMeaning{Values: map[string]string{}}
	if m != nil {
		out.Version, out.Judge = m.Version, m.Judge
		maps.Copy(out.Values, m.Values)
	}
	out.Values[name] = value
	return out
}

// MeaningChange is one difference between the meaning a snapshot recorded
// for an operator and the meaning the job gives it now.
type MeaningChange struct {
	// Name is the value that changed ("version" for the state schema).
	Name     string
	Was, Now string
	// Safe: the restored state reads correctly under Now.
	Safe bool
	// Why the change is safe, or what the state would be misread as.
	Why string
}

// VersionName is the MeaningChange.Name of a changed state schema version.
const VersionName = "version"

// CompareMeaning lists, in name order, the differences between the meaning
// a snapshot recorded (wasVersion, was) and now's. A value only one side
// has counts as changed from or to "". A changed schema version is never
// safe: the state of one layout cannot be read as another.
func CompareMeaning(wasVersion int, was map[string]string, now *StateMeaning) []MeaningChange {
	if now == nil {
		now = &StateMeaning{}
	}
	var out []MeaningChange
	if wasVersion != now.Version {
		out = append(out, MeaningChange{Name: VersionName, Was: strconv.Itoa(wasVersion), Now: strconv.Itoa(now.Version),
			Why: "the operator's state layout changed between the flinkgo that wrote the snapshot and this one"})
	}
	names := slices.Sorted(maps.Keys(was))
	for n := range now.Values {
		if _, ok := was[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		w, v := was[n], now.Values[n]
		if w == v {
			continue
		}
		c := MeaningChange{Name: n, Was: w, Now: v}
		if now.Judge != nil {
			c.Safe, c.Why = now.Judge(n, w, v)
		}
		if c.Why == "" {
			c.Safe = false
			c.Why = "the restored state is only valid with the value it was written with"
		}
		out = append(out, c)
	}
	return out
}
