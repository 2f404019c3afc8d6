package ha

import (
	"encoding/json"
	"strings"

	"github.com/flinkgo/flinkgo/pkg/api"
)

// view is a daemon's copy of the cluster's keys, kept by its watch.
type view struct {
	members map[string]Member
	jobs    map[string]Job
	// owners: job id → election key → candidate
	owners map[string]map[string]candidate
	// jobRef is Config.JobRef (nil: none).
	jobRef func(json.RawMessage) api.JobRef
}

type candidate struct {
	name string
	rev  int64 // create revision: the oldest candidate owns the job
}

func newView(jobRef func(json.RawMessage) api.JobRef) view {
	return view{members: map[string]Member{}, jobs: map[string]Job{}, owners: map[string]map[string]candidate{}, jobRef: jobRef}
}

// apply records a put (value != nil) or a delete of key.
func (v *view) apply(k keys, key string, value []byte, createRev int64) {
	switch {
	case strings.HasPrefix(key, k.members()):
		name := strings.TrimPrefix(key, k.members())
		if value == nil {
			delete(v.members, name)
			return
		}
		var m Member
		if json.Unmarshal(value, &m) == nil {
			v.members[name] = m
		}
	case strings.HasPrefix(key, k.jobs()):
		id := strings.TrimPrefix(key, k.jobs())
		if value == nil {
			delete(v.jobs, id)
			return
		}
		var j Job
		if json.Unmarshal(value, &j) == nil {
			if v.jobRef != nil {
				j.ref = v.jobRef(j.Record)
			}
			v.jobs[id] = j
		}
	case strings.HasPrefix(key, k.owners()):
		id, _, ok := strings.Cut(strings.TrimPrefix(key, k.owners()), "/")
		if !ok {
			return
		}
		if value == nil {
			delete(v.owners[id], key)
			if len(v.owners[id]) == 0 {
				delete(v.owners, id)
			}
			return
		}
		if v.owners[id] == nil {
			v.owners[id] = map[string]candidate{}
		}
		v.owners[id][key] = candidate{name: string(value), rev: createRev}
	}
}

// owner is the daemon that owns job id ("" when none).
func (v *view) owner(id string) string {
	best := candidate{}
	for _, c := range v.owners[id] {
		if best.rev == 0 || c.rev < best.rev {
			best = c
		}
	}
	return best.name
}

// orphans are the active jobs nobody owns, less those in skip.
func (v *view) orphans(skip func(string) bool) []string {
	var out []string
	for id, j := range v.jobs {
		if j.Active && len(v.owners[id]) == 0 && !skip(id) {
			out = append(out, id)
		}
	}
	return out
}

// owned counts the jobs each daemon owns.
func (v *view) owned() map[string]int {
	out := map[string]int{}
	for id := range v.owners {
		if o := v.owner(id); o != "" {
			out[o]++
		}
	}
	return out
}

func (v *view) memberList() []Member {
	out := make([]Member, 0, len(v.members))
	for _, m := range v.members {
		out = append(out, m)
	}
	return out
}
