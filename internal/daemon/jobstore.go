package daemon

import (
	"sort"
	"time"
)

// endedJob is what the job store's cap looks at of an ended job.
type endedJob struct {
	ID    string
	Ended time.Time
}

// overCapacity returns the ended jobs to drop so that at most capacity
// remain: the ones that ended first (ties by id, so the choice does not
// depend on map order). Active jobs never count: they are not passed in.
func overCapacity(ended []endedJob, capacity int) []string {
	if len(ended) <= capacity {
		return nil
	}
	sorted := append([]endedJob(nil), ended...)
	sort.Slice(sorted, func(i, j int) bool {
		if !sorted[i].Ended.Equal(sorted[j].Ended) {
			return sorted[i].Ended.Before(sorted[j].Ended)
		}
		return sorted[i].ID < sorted[j].ID
	})
	var drop []string
	for _, j := range sorted[:len(sorted)-capacity] {
		drop = append(drop, j.ID)
	}
	return drop
}

// trimEnded drops the ended jobs past jobstore.max-capacity from memory
// and from the registry (their directory: record, events, charts, job.out), so a
// daemon that ran many short jobs holds a bounded number. Checkpoints and
// savepoints are not touched: they live elsewhere and are the user's.
func (d *Daemon) trimEnded() {
	if d.cfg.JobStoreMaxCapacity <= 0 {
		return // a config not made by config.Load: no cap
	}
	d.mu.Lock()
	var ended []endedJob
	for id, e := range d.jobs {
		e.mu.Lock()
		if e.rec.State.Terminal() && !e.released {
			ended = append(ended, endedJob{ID: id, Ended: e.rec.UpdateTime})
		}
		e.mu.Unlock()
	}
	drop := overCapacity(ended, d.cfg.JobStoreMaxCapacity)
	for _, id := range drop {
		e := d.jobs[id]
		e.mu.Lock()
		e.dropped = true // its last writes (the sampler's journal) must not recreate the directory
		e.mu.Unlock()
		delete(d.jobs, id)
	}
	d.mu.Unlock()
	for _, id := range drop {
		if err := d.reg.remove(id); err != nil {
			d.log.Warn().Err(err).Str("job", id).Msg("could not remove an ended job past jobstore.max-capacity from the registry")
		}
	}
}
