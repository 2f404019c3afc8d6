package daemon

import (
	"fmt"
	"sort"
	"time"

	"github.com/flinkgo/flinkgo/pkg/api"
)

// liveInfo is a job's info with the rates and shares of time of the last
// sample filled in.
func (d *Daemon) liveInfo(e *entry) api.JobInfo {
	info := e.info()
	e.live.apply(&info)
	return info
}

// Overview summarises every job the daemon knows, and what needs a look.
func (d *Daemon) Overview() *api.Overview {
	entries := d.entries()
	now := time.Now()
	ov := &api.Overview{Jobs: []api.JobSummary{}, Attention: []api.Attention{}, States: map[api.JobState]int{}}
	for _, e := range entries {
		info := d.liveInfo(e)
		var cp api.CheckpointsInfo
		if e.job != nil {
			cp = e.job.Checkpoints()
		}
		s := summarize(info, now)
		s.Sparkline = e.live.sparkline()
		ov.Jobs = append(ov.Jobs, s)
		ov.States[info.State]++
		ov.Attention = append(ov.Attention, attention(info, cp)...)
	}
	sort.Slice(ov.Jobs, func(i, j int) bool { return ov.Jobs[i].SubmitTime.After(ov.Jobs[j].SubmitTime) })
	sort.SliceStable(ov.Attention, func(i, j int) bool {
		a, b := ov.Attention[i], ov.Attention[j]
		if (a.Severity == "error") != (b.Severity == "error") {
			return a.Severity == "error"
		}
		return a.Time.After(b.Time)
	})
	return ov
}

func summarize(info api.JobInfo, now time.Time) api.JobSummary {
	s := api.JobSummary{ID: info.ID, Name: info.Name, State: info.State, SubmitTime: info.SubmitTime,
		EndTime: info.EndTime, Restarts: info.Restarts, LastCheckpoint: info.LatestCheckpoint}
	end := now
	if info.EndTime != nil {
		end = *info.EndTime
	}
	s.UptimeMs = max(0, end.Sub(info.SubmitTime).Milliseconds())
	if info.Checkpoints != nil {
		s.FailedCheckpoints = info.Checkpoints.Failed
	}
	s.RecordsInPerSec, s.RecordsOutPerSec = jobRates(&info)
	return s
}

// attention lists a job's problems: failed, restarting, or checkpoints
// failing since the last one that completed.
func attention(info api.JobInfo, cp api.CheckpointsInfo) []api.Attention {
	var out []api.Attention
	add := func(sev, msg string, t *time.Time) {
		a := api.Attention{JobID: info.ID, JobName: info.Name, Severity: sev, Message: msg}
		if t != nil {
			a.Time = *t
		}
		out = append(out, a)
	}
	switch {
	case info.State == api.StateFailed:
		add("error", "job FAILED: "+orNone(info.Error)+rootCause(info), info.EndTime)
	case info.State.Active() && info.Restarts > 0:
		add("warning", fmt.Sprintf("restarted %d time(s); last failure: %s%s", info.Restarts, orNone(info.Error), rootCause(info)), info.ErrorTime)
	}
	if info.State.Active() {
		for _, op := range info.Operators {
			for _, p := range op.Problems {
				add("warning", fmt.Sprintf("operator %s: %s", op.UID, p), nil)
			}
		}
	}
	if f := cp.Latest.Failed; info.State.Active() && f != nil && (cp.Latest.Completed == nil || f.ID > cp.Latest.Completed.ID) {
		t := f.TriggerTime
		add("warning", fmt.Sprintf("%s %d failed (%d failed in all, none completed since): %s", f.Kind, f.ID, cp.Counts.Failed, orNone(f.FailureReason)), &t)
	}
	return out
}

// rootCause names the first failure of the streak when it is not the last.
func rootCause(info api.JobInfo) string {
	if info.RootCause == "" || info.RootCause == info.Error {
		return ""
	}
	return fmt.Sprintf("; root cause (the first of %d failures): %s", info.Failures, info.RootCause)
}

func orNone(s string) string {
	if s == "" {
		return "no error recorded"
	}
	return s
}
