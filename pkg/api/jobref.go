package api

import (
	"fmt"
	"sort"
	"strings"
)

// JobRef is what FindJob knows of a job: its id, name and state.
type JobRef struct {
	ID, Name string
	State    JobState
}

// FindJob is the one rule by which commands address a job (info, logs,
// stop, cancel, savepoint…): ref is a job id, a unique prefix of one, or a
// job's name. It returns the id ref names, or an error (CodeNotFound):
//
//   - an id equal to ref wins;
//   - otherwise the jobs whose id starts with ref or whose name is ref are
//     the candidates; one candidate is the job;
//   - several candidates that all match by name, only one of which has
//     not ended, name that one (a job re-run under its name: the earlier
//     runs have ended);
//   - otherwise several candidates are ambiguous: the error lists them
//     (id, name, state) so the user can pick an id.
func FindJob(ref string, jobs []JobRef) (string, error) {
	if ref == "" {
		return "", Errorf(CodeUsage, "no job id or name given")
	}
	var found []JobRef
	byName := true
	for _, j := range jobs {
		switch {
		case j.ID == ref:
			return j.ID, nil
		case strings.HasPrefix(j.ID, ref):
			found, byName = append(found, j), false
		case j.Name == ref:
			found = append(found, j)
		}
	}
	if len(found) == 1 {
		return found[0].ID, nil
	}
	if live := notEnded(found); byName && len(live) == 1 {
		return live[0].ID, nil
	}
	if len(found) == 0 {
		return "", Errorf(CodeNotFound, "no job with id, id prefix or name %q (flinkgo list -a shows all jobs)", ref)
	}
	sort.Slice(found, func(i, k int) bool { return found[i].ID < found[k].ID })
	matches := make([]string, len(found))
	for i, j := range found {
		matches[i] = fmt.Sprintf("%s (%q, %s)", j.ID, j.Name, j.State)
	}
	return "", Errorf(CodeNotFound, "job %q is ambiguous: it matches %s; give the job's id (or more of it)", ref, strings.Join(matches, ", "))
}

// notEnded are the jobs of js that have not ended.
func notEnded(js []JobRef) []JobRef {
	var out []JobRef
	for _, j := range js {
		if !j.State.Terminal() {
			out = append(out, j)
		}
	}
	return out
}
