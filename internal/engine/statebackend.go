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

// pebbleUnsupported is the error for a keyed operator of type typ on a
// pebble job when only the types in supported keep their state there.
func pebbleUnsupported(typ string, supported []string) string {
	return fmt.Sprintf("operator type %q keeps its keyed state in memory only: on the pebble state backend only %s run yet; run this job with stateBackend: {type: hashmap}", typ, strings.Join(supported, ", "))
}
