package daemon

import (
	"context"
	"encoding/json"
	"time"

	"github.com/flinkgo/flinkgo/internal/ha"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// HA mode's side of the daemon: the hooks through which an ha.Node hands
// it jobs (Adopt), takes them away (Release), learns that they ended, and
// shows the cluster's other jobs. The decisions are the Node's.

func (d *Daemon) clusterToken() string {
	if d.cluster == nil {
		return ""
	}
	return d.cluster.Token()
}

// joinCluster starts taking the cluster's orphaned jobs.
func (d *Daemon) joinCluster() {
	if d.cluster != nil {
		d.cluster.Run(d)
	}
}

// jobFS is the filesystem a job writes through: metered into the job's
// storage figures and, in HA mode, fenced, so a daemon that may have lost
// the job writes nothing more for it. The fence is outside the meter: a
// write it refuses never reaches the store and costs no request.
func (d *Daemon) jobFS(e *entry) vfs.FS {
	fs := vfs.Metered(d.fs, &e.storage, time.Time{})
	if d.cluster == nil {
		return fs
	}
	return ha.Fence(fs, d.cluster.Guard(e.rec.ID))
}

// ended follows a job's end here (its final record written): in HA mode
// the daemon gives up its election, so a job still to run (suspended by a
// drain or a shutdown) goes to another daemon. The local copy of a job
// that runs on elsewhere (released, or suspended) is forgotten: the
// cluster's record shows it, with its new owner.
func (d *Daemon) ended(e *entry) {
	if d.cluster == nil {
		return
	}
	e.mu.Lock()
	released, over := e.released, e.rec.State.Terminal()
	e.mu.Unlock()
	if !released {
		d.cluster.Ended(e.rec.ID)
	}
	if released || !over {
		d.forget(e)
	}
}

func (d *Daemon) forget(e *entry) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.jobs[e.rec.ID] == e {
		delete(d.jobs, e.rec.ID)
	}
}

// Adopt starts a job this daemon now owns from its record in etcd
// (ha.Host).
func (d *Daemon) Adopt(id string, data []byte) {
	rec := &Record{}
	if err := json.Unmarshal(data, rec); err != nil || rec.ID != id {
		d.log.Error().Err(err).Str("job", id).Msg("unreadable job record in etcd: job not taken")
		d.cluster.Ended(id)
		return
	}
	if rec.Version == 1 {
		migrateV1(rec, d.cfg.CheckpointsDir)
	}
	d.log.Info().Str("job", id).Str("state", string(rec.State)).Str("restore_point", restorePointDir(rec.Recovery)).Msg("taking over job")
	d.recoverRecord(rec)
	d.mu.Lock()
	e := d.jobs[id]
	d.mu.Unlock()
	if e != nil && e.job == nil { // it ended at once (finished a cancel, or could not resume)
		d.cluster.Ended(id)
	}
}

// Release stops the local copy of a job this daemon may no longer own,
// writing nothing for it (ha.Host).
func (d *Daemon) Release(id string) {
	d.mu.Lock()
	e := d.jobs[id]
	d.mu.Unlock()
	if e == nil {
		return
	}
	e.mu.Lock()
	e.released = true
	e.mu.Unlock()
	if e.job == nil {
		d.forget(e)
		return
	}
	go func() { _ = e.job.Suspend() }() // its watcher forgets it once it ended
}

// withOwner names this daemon as the owner of a job running here.
func (d *Daemon) withOwner(info api.JobInfo) api.JobInfo {
	if d.cluster != nil && info.State.Active() {
		info.Owner, info.OwnerPID = d.cluster.Name(), d.cluster.PID()
	}
	return info
}

// ownerPIDs are the process ids the live daemons published, by name.
func (d *Daemon) ownerPIDs() map[string]int {
	pids := map[string]int{}
	for _, m := range d.cluster.Members() {
		pids[m.Name] = m.PID
	}
	return pids
}

// clusterJobs are the jobs of the cluster that do not run here, as their
// owners last recorded them.
func (d *Daemon) clusterJobs(local []*entry, all bool, recent time.Time) []api.JobInfo {
	if d.cluster == nil {
		return nil
	}
	have := make(map[string]bool, len(local))
	for _, e := range local {
		have[e.rec.ID] = true
	}
	var out []api.JobInfo
	pids := d.ownerPIDs()
	for _, j := range d.cluster.Jobs() {
		if have[j.ID] {
			continue
		}
		info := storedInfo(j)
		info.OwnerPID = pids[info.Owner]
		if !all && !info.State.Active() && info.EndTime != nil && info.EndTime.Before(recent) {
			continue
		}
		info.Operators = nil
		out = append(out, info)
	}
	return out
}

// clusterInfo is job id of the cluster, which does not run here (resolve
// found it; the forwarder sends requests for owned jobs to their owners,
// so this one has none or is over), as its owner last recorded it.
func (d *Daemon) clusterInfo(id string) (*api.JobInfo, bool) {
	if d.cluster == nil {
		return nil, false
	}
	for _, j := range d.cluster.Jobs() {
		if j.ID == id {
			info := storedInfo(j)
			info.OwnerPID = d.ownerPIDs()[info.Owner]
			return &info, true
		}
	}
	return nil, false
}

// RecordRef is a cluster job's id, name and state read from its record in
// etcd (ha.Config.JobRef): the HA forwarder finds jobs named by their name
// with it, by the rule the daemon uses (api.FindJob).
func RecordRef(record json.RawMessage) api.JobRef {
	var rec struct {
		ID    string       `json:"id"`
		Name  string       `json:"name"`
		State api.JobState `json:"state"`
	}
	_ = json.Unmarshal(record, &rec) // an unreadable record is found by id only
	return api.JobRef{ID: rec.ID, Name: rec.Name, State: rec.State}
}

// clusterRefs are the cluster's jobs that do not run here (not in have),
// for lookup: a name is unique in the cluster or not at all.
func (d *Daemon) clusterRefs(have map[string]*entry) []api.JobRef {
	if d.cluster == nil {
		return nil
	}
	var out []api.JobRef
	for _, j := range d.cluster.Jobs() {
		if have[j.ID] == nil {
			r := RecordRef(j.Record)
			r.ID = j.ID
			out = append(out, r)
		}
	}
	return out
}

func storedInfo(j ha.Job) api.JobInfo {
	var rec Record
	_ = json.Unmarshal(j.Record, &rec)
	info := rec.Info
	if info.ID == "" {
		info.ID, info.Name, info.File, info.SubmitTime = rec.ID, rec.Name, rec.File, rec.SubmitTime
	}
	info.State = rec.State
	info.Owner = j.Owner
	return info
}

// Drain moves this daemon's jobs to the other daemons of its cluster for
// maintenance: it stops taking jobs, then stops each running job with a
// savepoint, leaving it SUSPENDED; as each ends the daemon gives it up and
// another one resumes it from that savepoint. The daemon keeps running
// (with no jobs) until it is stopped; a restart takes jobs again.
func (d *Daemon) Drain() (*api.DrainResponse, error) {
	if d.cluster == nil {
		return nil, api.Errorf(api.CodeConflict, "this daemon is not in HA mode: drain moves jobs to other daemons of an HA cluster (high-availability.type: etcd)")
	}
	if err := d.cluster.SetDraining(true); err != nil {
		return nil, api.Errorf(api.CodeFailed, "mark the daemon draining in etcd: %v", err)
	}
	jobs := d.active()
	resp := &api.DrainResponse{Daemon: d.cluster.Name()}
	for _, e := range jobs {
		resp.Jobs = append(resp.Jobs, e.rec.ID)
	}
	ctx, cancel := context.WithTimeout(context.Background(), d.cfg.ShutdownSavepointTimeout+time.Minute)
	defer cancel()
	if !d.suspendAll(ctx, jobs) {
		return resp, api.Errorf(api.CodeTimeout, "jobs did not stop in time")
	}
	return resp, nil
}
