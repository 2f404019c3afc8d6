package engine

import (
	"fmt"
	"strings"

	"github.com/flinkgo/flinkgo/pkg/api"
)

// resolveStateBackend is the job's backend over the daemon's default over
// hashmap. Both arguments are validated.
func resolveStateBackend(job *api.StateBackendSpec, daemon string) string {
	if job != nil && job.Type != "" {
		return job.Type
	}
	if daemon != "" {
		return daemon
	}
	return api.BackendHashMap
}

// resolveIncremental is whether a job on backend takes incremental
// checkpoints: its spec's choice over the daemon's. A spec asking for them
// on the heap (its type from the daemon's default) is refused at the field;
// the daemon's default applies to pebble jobs only.
func resolveIncremental(p *api.ParsedJob, backend string, daemon bool) bool {
	sb := p.Spec.StateBackend
	if sb == nil || sb.Incremental == nil {
		return daemon && backend == api.BackendPebble
	}
	if *sb.Incremental && backend != api.BackendPebble && sb.Type == "" {
		p.Dec.ErrorAt("stateBackend.incremental", "%s (this daemon's state.backend.type is %s)", api.IncrementalOnHeap, backend)
	}
	return *sb.Incremental && backend == api.BackendPebble
}

// pebbleUnsupported is the error for a keyed operator of type typ on a
// pebble job when only the types in supported keep their state there.
func pebbleUnsupported(typ string, supported []string) string {
	return fmt.Sprintf("operator type %q keeps its keyed state in memory only: on the pebble state backend only %s run yet; run this job with stateBackend: {type: hashmap}", typ, strings.Join(supported, ", "))
}
