package ha

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/rs/zerolog"

	"github.com/flinkgo/flinkgo/pkg/api"
)

// Config configures a Node.
type Config struct {
	// Endpoints are etcd's client URLs (high-availability.etcd.endpoints).
	Endpoints []string
	// ClusterID names the flinkgo cluster: daemons with the same id share
	// jobs (high-availability.cluster-id).
	ClusterID string
	// LeaseTTL is the daemon's session lease: how long etcd waits for a
	// daemon that stopped answering before its jobs go elsewhere
	// (high-availability.etcd.lease-ttl; whole seconds).
	LeaseTTL time.Duration
	// Name is this daemon's name in the cluster, unique among its live
	// daemons; Addr is its REST address, where the others forward.
	Name, Addr string
	// PID is the daemon's process id, published in its member key so
	// that `flinkgo list` can say which process runs a job (0: none).
	PID int
	Log zerolog.Logger
	// JobRef reads a job's name and state from its record (the daemon's,
	// opaque to this package), so that a request naming a job by its name
	// is forwarded to its owner as one naming it by id is (api.FindJob,
	// the one rule commands address jobs by). Nil: jobs are found by id
	// and id prefix only. It is called once per record version, with the
	// Node's lock held: it must not call the Node.
	JobRef func(record json.RawMessage) api.JobRef
}

func (c *Config) check() error {
	switch {
	case len(c.Endpoints) == 0:
		return errors.New("ha: no etcd endpoints")
	case c.ClusterID == "":
		return errors.New("ha: no cluster id")
	case c.Name == "" || c.Addr == "":
		return errors.New("ha: the daemon needs a name and a REST address")
	case c.LeaseTTL < time.Second:
		return errors.New("ha: lease TTL under 1s")
	}
	return nil
}
