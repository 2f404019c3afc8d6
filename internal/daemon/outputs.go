package daemon

import (
	"path/filepath"
	"strings"

	"github.com/flinkgo/flinkgo/internal/engine"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// One output directory, one owner: the daemon refuses at submit a job that
// would write where another of its jobs that has not ended writes, or into
// a directory the ownership rule (runtime.OutputClaim) refuses. The sinks
// check the rule again when they open (another daemon cannot ask this one).

// output is a directory a sink of a job writes.
type output struct{ uid, path string }

// graphOutputs lists the output directories of g's sinks.
func graphOutputs(g *engine.Graph) []output {
	var out []output
	for _, v := range g.Vertices {
		if v.Plan == nil {
			continue
		}
		for _, p := range v.Plan.OutputPaths {
			out = append(out, output{uid: v.Op.UID, path: vfs.Clean(p)})
		}
	}
	return out
}

// entryOutputs lists the output directories of a job the daemon knows.
func (d *Daemon) entryOutputs(e *entry) []output {
	if e.job != nil {
		return graphOutputs(e.job.Graph())
	}
	g, err := engine.Compile(d.types, e.rec.File, []byte(e.rec.Spec), d.defaults())
	if err != nil {
		return nil
	}
	return graphOutputs(g)
}

// overlap says how directory a relates to b: "is" (the same), "is inside",
// "contains", or "" (neither contains the other).
func overlap(a, b string) string {
	sep := string(filepath.Separator)
	switch {
	case a == b:
		return "is"
	case strings.HasPrefix(a, strings.TrimSuffix(b, sep)+sep):
		return "is inside"
	case strings.HasPrefix(b, strings.TrimSuffix(a, sep)+sep):
		return "contains"
	}
	return ""
}

// checkOutputs refuses a new job g (restoring restore, when not nil)
// whose output directories overlap those of another job of this daemon
// that has not ended, or that the ownership rule refuses. Never the job
// already there: the newcomer is refused. d.submitMu is held, so no job
// starts meanwhile.
func (d *Daemon) checkOutputs(g *engine.Graph, restore *engine.Restore, allowNonEmpty bool) error {
	var live []*entry
	for _, e := range d.entries() {
		if !e.info().State.Terminal() {
			live = append(live, e)
		}
	}
	for _, o := range graphOutputs(g) {
		for _, e := range live {
			for _, q := range d.entryOutputs(e) {
				if rel := overlap(o.path, q.path); rel != "" {
					info := e.info()
					return api.Errorf(api.CodeConflict, "operator %q writes to %s, which %s %s, the output of operator %q of job %s (%q, %s): two jobs writing one directory delete each other's part files and duplicate or lose records. Give this job another path, or stop or cancel job %s first",
						o.uid, o.path, rel, q.path, q.uid, e.rec.ID, info.Name, info.State, e.rec.ID)
				}
			}
		}
		if err := d.checkOwner(o, restore, allowNonEmpty); err != nil {
			return err
		}
	}
	return nil
}

// jobEnded says whether job id is one of this daemon's and has ended; the
// output directory of an ended job that committed nothing is free to take
// (runtime.OutputClaim.OwnerEnded).
func (d *Daemon) jobEnded(id string) bool {
	d.mu.Lock()
	e := d.jobs[id]
	d.mu.Unlock()
	return e != nil && e.info().State.Terminal()
}

// checkOwner applies the ownership rule to one output directory.
func (d *Daemon) checkOwner(o output, restore *engine.Restore, allowNonEmpty bool) error {
	owner, empty, err := runtime.InspectOutput(d.fs, o.path)
	if err != nil {
		return api.Errorf(api.CodeFailed, "operator %q: output directory %s: %v", o.uid, o.path, err)
	}
	var known *entry
	if owner != nil {
		d.mu.Lock()
		known = d.jobs[owner.Job]
		d.mu.Unlock()
	}
	if known != nil && !known.info().State.Terminal() {
		return api.Errorf(api.CodeConflict, "operator %q: output directory %s belongs to job %s, which is %s: two jobs writing one directory delete each other's part files; give this job another path, or stop or cancel job %s first",
			o.uid, o.path, owner.Job, known.info().State, owner.Job)
	}
	claim := runtime.OutputClaim{Operator: o.uid, AllowNonEmpty: allowNonEmpty, OwnerEnded: d.jobEnded}
	if restore != nil {
		if st := restore.Meta.Operator(o.uid); st != nil && st.HasState() {
			claim.Restoring, claim.RestoredJob = true, restore.Meta.JobID
		}
	}
	if err := claim.Check(o.path, owner, empty); err != nil {
		msg := err.Error()
		if known != nil {
			msg += " (job " + owner.Job + " is " + string(known.info().State) + " in this daemon)"
		} else if owner != nil {
			msg += " (job " + owner.Job + " is not known to this daemon: another daemon's, or removed from its registry)"
		}
		return api.Errorf(api.CodeConflict, "operator %q: %s", o.uid, msg)
	}
	return nil
}
