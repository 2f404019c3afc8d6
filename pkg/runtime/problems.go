package runtime

import "sort"

// SetProblem records what keeps an operator from doing its work, in words
// ("partition t/0 cannot fetch since 12:00:01: connection refused"), under
// key (one per cause, say per partition), replacing the key's earlier
// text. info lists the problems of each operator and the dashboard puts
// them on its attention list, so a job that is RUNNING but cannot read is
// seen as such. Safe for concurrent use.
func (g *Metrics) SetProblem(key, text string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.problems == nil {
		g.problems = map[string]string{}
	}
	g.problems[key] = text
}

// ClearProblem removes the problem under key (it was solved).
func (g *Metrics) ClearProblem(key string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.problems, key)
}

// Problems returns the current problems, ordered by key.
func (g *Metrics) Problems() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	keys := make([]string, 0, len(g.problems))
	for k := range g.problems {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = g.problems[k]
	}
	return out
}
