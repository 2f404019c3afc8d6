package daemon

import (
	"path/filepath"

	"github.com/flinkgo/flinkgo/pkg/api"
)

// Default and largest number of output lines and events a tail returns.
const (
	logsTailDefault = 100
	logsTailMax     = outputLinesMax
)

// Logs returns the tail of a job's print output and its recent events, or
// what came after a previous answer's positions.
func (d *Daemon) Logs(ref string, req api.LogsQuery) (*api.JobLogs, error) {
	e, err := d.lookup(ref)
	if err != nil {
		return nil, err
	}
	n := req.Lines
	if n <= 0 {
		n = logsTailDefault
	}
	n = min(n, logsTailMax)
	e.mu.Lock()
	out := e.out
	e.mu.Unlock()
	if out == nil {
		out = outputOf(filepath.Join(d.reg.jobDir(e.rec.ID), "job.out"))
	}
	var r outputRead
	from := api.LogsPosition{Output: -1, Events: -1}
	if req.From != nil {
		from = *req.From
		r, err = out.ReadFrom(from.Output)
	} else {
		r, err = out.Tail(n)
	}
	if err != nil {
		return nil, api.Errorf(api.CodeFailed, "read the print output of job %s: %v", e.rec.ID, err)
	}
	logs := &api.JobLogs{State: e.info().State, Output: r.lines, OutputNext: r.next, OutputSkipped: r.skipped}
	if logs.Output == nil {
		logs.Output = []string{}
	}
	logs.Events, logs.EventsNext = e.live.eventsAfter(from.Events, n)
	return logs, nil
}
