package checkpoint

import (
	"fmt"
	"slices"
	"strings"
)

// The restore decision: where a job resumes after a failure or a daemon
// restart. It is pure, like the Coordinator: facts in, a decision out; the
// caller loads the snapshots it asks for (RestoreTry) and feeds the outcome back,
// so it can be replayed from scripts (testdata/restore). Both the job loop
// (a restart after a task failure) and the daemon (a restart after a crash
// or shutdown) call it: one rule, one place.
//
// The rule, in order:
//
//  1. The recorded restore point, the newest snapshot whose completion could
//     have committed output (a registry records it before anything commits).
//  2. Older retained checkpoints, newest first, loudly: a sink restored from
//     an older snapshot takes back what was committed after it.
//  3. The savepoint the job was submitted with (run -s), likewise.
//  4. Nothing readable: start fresh only if the job provably never
//     completed a snapshot that commits (no restore point recorded, and the
//     record is one that is written before commits); otherwise refuse, with
//     what the user can do, rather than repeat committed output.
//
// Deletion: before a job starts from the decision, the checkpoints in its
// directory that the record does not know (neither the restore point nor
// retained) are abandoned: aborted, or completed on disk but never
// recorded, hence never committed. They are deleted, since a sink restored
// from the decision cleans up the files they refer to. Nothing the record
// lists is deleted, whatever loads: not the restore point, not a retained
// checkpoint. A legacy record (see RestoreFacts.Legacy) deletes nothing.

// Point is a snapshot a job can restore from.
type Point struct {
	ID   int64
	Kind Kind
	Dir  string
}

func (p Point) String() string {
	if p.ID == 0 { // a savepoint named by path only (an old registry record)
		return fmt.Sprintf("%s %s", p.Kind, p.Dir)
	}
	return fmt.Sprintf("%s %d (%s)", p.Kind, p.ID, p.Dir)
}

// RestoreFacts are what the decision is made from.
type RestoreFacts struct {
	// Recorded is the job's recorded restore point; nil when it recorded none.
	Recorded *Point
	// Initial is the savepoint the job was submitted with; nil: none.
	Initial *Point
	// Retained are the completed checkpoints the record lists, any order.
	Retained []Point
	// OnDisk are the chk-<n> directories in the job's checkpoint directory.
	OnDisk []Point
	// NextID is the recorded id of the job's next checkpoint (0: unknown).
	NextID int64
	// Legacy: the record was written by a flinkgo that recorded a restore
	// point only after its sinks committed, and went on when that failed
	// (registry version 1). Its restore point may lag behind what
	// committed, so it is not proof that nothing newer committed, it lists
	// no retained checkpoints (those on disk below the restore point stand
	// in), and nothing is deleted.
	Legacy bool
	// Tried holds the outcome of every load asked for so far, by Dir (nil:
	// the snapshot is complete and loads).
	Tried map[string]error
	// LostFrom (0: none) rules out the snapshots from this id on: the
	// output of checkpoint LostFrom was lost before its commit (a Kafka
	// transaction the broker aborted), and restoring it or a newer one
	// would skip those records.
	LostFrom int64
}

// RestoreAction is what the decision says to do.
type RestoreAction uint8

const (
	// RestoreTry: load RestoreDecision.Point, record the outcome in RestoreFacts.Tried, decide again.
	RestoreTry RestoreAction = iota + 1
	// RestoreLoad: restore from RestoreDecision.Point.
	RestoreLoad
	// RestoreFresh: start from the sources' starting positions, without state.
	RestoreFresh
	// RestoreRefuse: do not start; RestoreDecision.Reason says why and what the user can do.
	RestoreRefuse
)

func (a RestoreAction) String() string {
	switch a {
	case RestoreTry:
		return "try"
	case RestoreLoad:
		return "load"
	case RestoreFresh:
		return "fresh"
	case RestoreRefuse:
		return "refuse"
	}
	return fmt.Sprintf("RestoreAction(%d)", a)
}

// Unusable is a snapshot the decision passed over, and why.
type Unusable struct {
	Point
	Err error
}

// RestoreDecision is the outcome of DecideRestore.
type RestoreDecision struct {
	Action RestoreAction
	// Point to try or to load.
	Point Point
	// Passed over (RestoreLoad: loudly; RestoreRefuse: the reason lists them).
	Passed []Unusable
	// Discard lists abandoned checkpoints to delete before the job starts
	// (RestoreLoad, RestoreFresh).
	Discard []Point
	// Retained are the checkpoints retention goes on managing, oldest
	// first, and NextID the id of the next checkpoint (RestoreLoad, RestoreFresh).
	Retained []int64
	NextID   int64
	// Reason for a refusal: what cannot be read, why starting over is not
	// safe, and what the user can do.
	Reason string
}

// DecideRestore applies the rule to f.
func DecideRestore(f RestoreFacts) RestoreDecision {
	var passed []Unusable
	for _, p := range candidates(f) {
		if f.LostFrom > 0 && p.ID >= f.LostFrom {
			passed = append(passed, Unusable{Point: p, Err: fmt.Errorf("the output of checkpoint %d was lost before its commit: a restore from it or a newer snapshot would skip those records", f.LostFrom)})
			continue
		}
		err, tried := f.Tried[p.Dir]
		switch {
		case !tried:
			return RestoreDecision{Action: RestoreTry, Point: p}
		case err == nil:
			return f.finish(RestoreDecision{Action: RestoreLoad, Point: p, Passed: passed})
		}
		passed = append(passed, Unusable{Point: p, Err: err})
	}
	if f.LostFrom > 0 && !slices.ContainsFunc(passed, func(u Unusable) bool { return u.ID < f.LostFrom }) {
		if f.Initial != nil {
			// The job started from a savepoint whose own output was
			// lost: the state before it is not the start of the input,
			// and an explicit -s never falls back to something else.
			return RestoreDecision{Action: RestoreRefuse, Passed: passed, Reason: lostRefusal(*f.Initial, f.LostFrom)}
		}
		// The lost checkpoint was the first: the state before it is the
		// start, and replaying from there is the restore before it.
		return f.finish(RestoreDecision{Action: RestoreFresh, Passed: passed})
	}
	if f.Recorded != nil || f.Initial != nil {
		return RestoreDecision{Action: RestoreRefuse, Passed: passed, Reason: refusal(passed)}
	}
	if f.Legacy {
		// No restore point in an old record proves nothing: a complete
		// checkpoint on disk may have committed.
		for _, p := range newestFirst(f.OnDisk) {
			if err, tried := f.Tried[p.Dir]; !tried {
				return RestoreDecision{Action: RestoreTry, Point: p}
			} else if err == nil {
				return RestoreDecision{Action: RestoreRefuse, Reason: fmt.Sprintf("the job's registry record, written by an older flinkgo, names no restore point, but %s is complete and may have committed output; restore it with `flinkgo run -s %s JOB.yaml` (starting over would repeat that output)", p, p.Dir)}
			}
		}
	}
	return f.finish(RestoreDecision{Action: RestoreFresh})
}

// candidates are the snapshots to restore from, in order of preference.
func candidates(f RestoreFacts) []Point {
	var out []Point
	add := func(p Point) {
		if !slices.ContainsFunc(out, func(q Point) bool { return q.Dir == p.Dir }) {
			out = append(out, p)
		}
	}
	if f.Recorded != nil {
		add(*f.Recorded)
		older := f.Retained
		if f.Legacy {
			older = f.OnDisk
		}
		for _, p := range newestFirst(older) {
			if p.ID < f.Recorded.ID {
				add(p)
			}
		}
	}
	if f.Initial != nil {
		add(*f.Initial)
	}
	return out
}

// finish adds what to delete, what to retain and the next id to a RestoreLoad or
// RestoreFresh decision.
func (f RestoreFacts) finish(d RestoreDecision) RestoreDecision {
	d.NextID = max(f.NextID, d.Point.ID+1, 1)
	if f.Recorded != nil {
		d.NextID = max(d.NextID, f.Recorded.ID+1)
	}
	for _, p := range f.OnDisk {
		d.NextID = max(d.NextID, p.ID+1)
	}
	keep := f.Retained
	if f.Legacy {
		// On-disk checkpoints up to the loaded one stand in for the list.
		keep = nil
		for _, p := range f.OnDisk {
			if p.ID <= d.Point.ID && f.Tried[p.Dir] == nil {
				keep = append(keep, p)
			}
		}
	}
	for _, p := range keep {
		if f.LostFrom == 0 || p.ID < f.LostFrom {
			d.Retained = append(d.Retained, p.ID)
		}
	}
	slices.Sort(d.Retained)
	d.Retained = slices.Compact(d.Retained)
	if f.Legacy {
		return d
	}
	for _, p := range newestFirst(f.OnDisk) {
		known := slices.Contains(d.Retained, p.ID) || p.Dir == d.Point.Dir || (f.Recorded != nil && p.Dir == f.Recorded.Dir)
		if !known {
			d.Discard = append(d.Discard, p)
		}
	}
	return d
}

func compareIDs(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func newestFirst(ps []Point) []Point {
	out := slices.Clone(ps)
	slices.SortStableFunc(out, func(a, b Point) int { return compareIDs(b.ID, a.ID) })
	return out
}

// refusal words why nothing can be restored and what the user can do.
func refusal(passed []Unusable) string {
	var b strings.Builder
	b.WriteString("no snapshot of the job can be read, and starting over would repeat the output it already committed: ")
	for i, u := range passed {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s: %v", u.Point, u.Err)
	}
	first := passed[0].Dir
	fmt.Fprintf(&b, ". Repair %s (or restore an older savepoint of the job: its sinks take back what was committed after it) and resume with `flinkgo run -s %s JOB.yaml`; to start over, move the job's output away and submit it again without -s", first, first)
	return b.String()
}

// lostRefusal words why a job started from savepoint sp cannot go on once
// the output of snapshot lost (sp or newer, with nothing between) was lost
// before its commit, and what the user can do.
func lostRefusal(sp Point, lost int64) string {
	return fmt.Sprintf("the output of snapshot %d, which the job cannot restore before (it started from %s), was lost before its commit "+
		"(a Kafka transaction the broker aborted, usually because the savepoint was restored after the sink's transactionTimeout): "+
		"restoring %s would skip those records and starting over would repeat what the original job committed before it. "+
		"Restore an older savepoint or retained checkpoint of the original job (`flinkgo run -s PATH JOB.yaml`); "+
		"next time take the savepoint with `flinkgo stop` (it commits at once) or restore it within transactionTimeout", lost, sp, sp.Dir)
}

// ParseKind reads a Kind from its String form (as _metadata and registry
// records hold it).
func ParseKind(s string) (Kind, error) {
	for k := Periodic; k <= Final; k++ {
		if k.String() == s {
			return k, nil
		}
	}
	return 0, fmt.Errorf("unknown snapshot kind %q", s)
}
