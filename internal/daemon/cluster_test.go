package daemon

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/pkg/api"
)

// The HA forwarder finds a job by name through RecordRef: it must read the
// name and state the registry writes into etcd.
func TestRecordRefReadsTheRegistryRecord(t *testing.T) {
	data, err := json.Marshal(&Record{ID: "ab12", Name: "user-windows", State: api.StateFinished, Spec: "name: user-windows"})
	require.NoError(t, err)
	require.Equal(t, api.JobRef{ID: "ab12", Name: "user-windows", State: api.StateFinished}, RecordRef(data))
	require.Equal(t, api.JobRef{}, RecordRef(json.RawMessage(`not json`)), "an unreadable record is found by id only")
}
