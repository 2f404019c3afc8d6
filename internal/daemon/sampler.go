package daemon

import "time"

// The sampler reads every job the daemon runs once a second (sampleEvery):
// the rates and shares of time that info, /metrics and the dashboard show,
// the history behind the dashboard's charts, and the checkpoint and problem
// events of `flinkgo logs`. It runs whether or not anyone looks, so a page
// opened now shows the last 15 minutes; its cost is one Info and one
// checkpoint listing per running job and second (BenchmarkDashboardCost).

func (d *Daemon) startSampler() {
	stop, done := make(chan struct{}), make(chan struct{})
	d.samplerStop, d.samplerDone = stop, done
	go func() {
		defer close(done)
		tick := time.NewTicker(sampleEvery)
		defer tick.Stop()
		d.sampleAll(time.Now())
		for {
			select {
			case <-stop:
				return
			case now := <-tick.C:
				d.sampleAll(now)
			}
		}
	}()
}

// stopSampler stops the sampler and waits for it.
func (d *Daemon) stopSampler() {
	if d.samplerStop == nil {
		return
	}
	close(d.samplerStop)
	<-d.samplerDone
	d.samplerStop = nil
}

// sampleAll samples the jobs that run here and forgets the history of
// those that ended more than historySpan ago.
func (d *Daemon) sampleAll(now time.Time) {
	for _, e := range d.entries() {
		if e.job != nil && e.live.watching() && e.live.sample(now, e.job.Info(), e.job.Checkpoints()) {
			// The last look at an ended job may have found its last
			// checkpoints: keep them for the next daemon too, with the
			// job's charts, now complete.
			e.mu.Lock()
			d.saveJournalLocked(e)
			d.saveHistoryLocked(e)
			e.mu.Unlock()
		}
		e.live.expire(now)
	}
}
