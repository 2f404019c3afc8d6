package ha

import "sort"

// Member is a live daemon of the cluster, as it registered itself.
type Member struct {
	Name string `json:"name"`
	// Addr is its REST address (host:port), where other daemons forward
	// requests for its jobs.
	Addr string `json:"addr"`
	// Draining: it takes no new jobs (flinkgo daemon drain).
	Draining bool `json:"draining,omitempty"`
	// PID is its process id on its host (0: not published).
	PID int `json:"pid,omitempty"`
}

// Place picks the daemon a new job goes to: the live member that is not
// draining and owns the fewest jobs, ties broken by name so that every
// daemon decides alike. owned counts the jobs each daemon owns (a name
// missing counts 0). It returns "" when no member may take a job.
func Place(members []Member, owned map[string]int) string {
	best := ""
	for _, m := range members {
		if m.Draining {
			continue
		}
		if best == "" || owned[m.Name] < owned[best] || owned[m.Name] == owned[best] && m.Name < best {
			best = m.Name
		}
	}
	return best
}

// Assign decides which daemon takes each orphaned job (active in etcd,
// owned by nobody): in job id order, each goes where Place puts it, and
// counts for the next. Every daemon computes it from the same view, so
// usually only the chosen one campaigns; when views differ the job's
// election still makes one owner. Jobs no member may take are left out.
func Assign(orphans []string, members []Member, owned map[string]int) map[string]string {
	counts := make(map[string]int, len(owned))
	for k, v := range owned {
		counts[k] = v
	}
	ids := append([]string(nil), orphans...)
	sort.Strings(ids)
	out := map[string]string{}
	for _, id := range ids {
		to := Place(members, counts)
		if to == "" {
			break
		}
		out[id] = to
		counts[to]++
	}
	return out
}
