package config

import (
	"path/filepath"

	"github.com/flinkgo/flinkgo/pkg/api"
)

// check validates HA mode and defaults the snapshot directories onto the
// shared storage: every daemon of the cluster must reach every job's
// checkpoints.
func (h *HA) check(c *Config, file string, positions map[string]api.Pos) []api.FieldError {
	if h.Type == "" {
		return nil
	}
	var out []api.FieldError
	missing := func(key, msg string) {
		out = append(out, api.FieldError{File: file, Pos: positions["high-availability.type"], Field: key, Msg: msg})
	}
	if len(h.Endpoints) == 0 {
		missing("high-availability.etcd.endpoints", "high-availability.type is etcd but no etcd endpoints are given (e.g. http://127.0.0.1:2379; `flinkgo dev etcd` starts one)")
	}
	if h.StorageDir == "" || h.StorageDir == "." {
		missing("high-availability.storageDir", "high-availability.type is etcd but no storageDir is given: a directory every daemon of the cluster reaches (checkpoints and savepoints go there)")
	}
	if c.RestAddress == "" {
		missing("rest.address", "high-availability.type is etcd but rest.address is empty: the cluster's daemons forward requests to each other over it")
	}
	if h.StorageDir != "" && h.StorageDir != "." {
		base := filepath.Join(h.StorageDir, h.ClusterID)
		if c.CheckpointsDir == "" {
			c.CheckpointsDir = filepath.Join(base, "checkpoints")
		}
		if c.SavepointsDir == "" {
			c.SavepointsDir = filepath.Join(base, "savepoints")
		}
	}
	return out
}
