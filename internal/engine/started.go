package engine

// Started reports whether every subtask of the current attempt opened its
// operator: the sources reached their brokers and found their topics or
// streams, the sinks claimed their output. Until then a RUNNING job may
// still fail at start on its configuration (`run` waits for this).
func (j *Job) Started() bool {
	j.mu.Lock()
	e := j.status.exec
	j.mu.Unlock()
	return e != nil && int(e.opened.Load()) == len(e.tasks)
}
