package api

import (
	"strings"
	"time"
)

// SubmitRequest is POST /v1/jobs.
type SubmitRequest struct {
	// Spec is the job's YAML text; File names it in error messages.
	Spec string `json:"spec"`
	File string `json:"file,omitempty"`
	// SavepointPath restores the job from a savepoint or retained
	// checkpoint (run -s).
	SavepointPath string `json:"savepointPath,omitempty"`
	// AllowNonRestoredState drops snapshot state whose uid is not in the job.
	AllowNonRestoredState bool `json:"allowNonRestoredState,omitempty"`
	// AllowDrained restores a savepoint of stop --drain, which is refused
	// otherwise (its windows and timers fired at the drain).
	AllowDrained bool `json:"allowDrained,omitempty"`
	// DryRun validates and plans the restore without starting anything.
	DryRun bool `json:"dryRun,omitempty"`
	// AllowNonEmptyOutput lets a job write into output directories that
	// hold other files or another job's ownership marker (never into the
	// output of a job of the daemon that has not ended).
	AllowNonEmptyOutput bool `json:"allowNonEmptyOutput,omitempty"`
	// RequestID makes the submission idempotent: a request with the id of
	// an earlier one creates nothing and answers with the job that one
	// created (a client retrying after an ambiguous failure). At most 128
	// characters of [A-Za-z0-9._-]; empty: no deduplication.
	RequestID string `json:"requestId,omitempty"`
}

// SubmitResponse answers a submission.
type SubmitResponse struct {
	ID    string       `json:"id,omitempty"`
	State JobState     `json:"state,omitempty"`
	Plan  *RestorePlan `json:"plan,omitempty"`
}

// RestorePlan says how a snapshot's operators map onto a job by uid.
type RestorePlan struct {
	From      string         `json:"from"`
	Kind      string         `json:"kind"`
	ID        int64          `json:"checkpointId"`
	Matched   []MatchedState `json:"matched"`
	Dropped   []DroppedState `json:"dropped,omitempty"`
	New       []string       `json:"new,omitempty"`
	AllowDrop bool           `json:"allowNonRestoredState"`
	// Drained: the snapshot was written by stop --drain.
	Drained  bool     `json:"drained,omitempty"`
	Problems []string `json:"problems,omitempty"`
	// Notes say what the restore does that a user should know and that
	// does not refuse it: a changed option that is safe for the state, a
	// snapshot whose state meanings could not be checked.
	Notes []string `json:"notes,omitempty"`
	// Warnings do not stop the restore but may make it fail (a snapshot
	// whose pending Kafka transactions may have expired: their records
	// are written again from the topic unless retention deleted them).
	Warnings []string `json:"warnings,omitempty"`
}

// Err is nil when the restore can go ahead.
func (p *RestorePlan) Err() error {
	if len(p.Problems) == 0 {
		return nil
	}
	return &Error{Code: CodeInvalid, Message: "cannot restore from " + p.From + ":\n  " + strings.Join(p.Problems, "\n  ")}
}

// MatchedState is an operator of the snapshot that the job has (by uid):
// restored, unless Problem says why it cannot be.
type MatchedState struct {
	UID string `json:"uid"`
	// Type is the operator's type in the snapshot; NewType is set when
	// the job's operator of that uid has another one.
	Type           string `json:"type"`
	NewType        string `json:"newType,omitempty"`
	OldParallelism int    `json:"oldParallelism"`
	NewParallelism int    `json:"newParallelism"`
	Bytes          int64  `json:"bytes"`
	Keys           int64  `json:"keys,omitempty"`
	// Outputs are the directories the restored operator writes and what
	// the restore does in them.
	Outputs []RestoredOutput `json:"outputs,omitempty"`
	// Problem is why the state cannot be restored ("" when it can); it is
	// also in RestorePlan.Problems.
	Problem string `json:"problem,omitempty"`
}

// RestoredOutput is an output directory of a restored operator.
type RestoredOutput struct {
	Path   string `json:"path"`
	Effect string `json:"effect"`
}

// DroppedState is an operator of the snapshot that the job does not have.
type DroppedState struct {
	UID   string `json:"uid"`
	Type  string `json:"type"`
	Bytes int64  `json:"bytes"`
}

// JobInfo is GET /v1/jobs/{id} (and, abridged, each item of GET /v1/jobs).
type JobInfo struct {
	ID    string   `json:"id"`
	Name  string   `json:"name"`
	State JobState `json:"state"`
	Error string   `json:"error,omitempty"`
	// ErrorTime is when Error happened (the last failure of any attempt).
	ErrorTime *time.Time `json:"errorTime,omitempty"`
	// RootCause is the first failure of the current streak (failures with
	// no completed checkpoint between them), which the later ones often
	// only follow from (a broker outage first fails fetching, then every
	// restart's connect); Failures counts the streak.
	RootCause        string            `json:"rootCause,omitempty"`
	RootCauseTime    *time.Time        `json:"rootCauseTime,omitempty"`
	Failures         int               `json:"consecutiveFailures,omitempty"`
	File             string            `json:"file,omitempty"`
	SubmitTime       time.Time         `json:"submitTime"`
	EndTime          *time.Time        `json:"endTime,omitempty"`
	Restarts         int               `json:"restarts"`
	RestoredFrom     string            `json:"restoredFrom,omitempty"`
	Checkpointing    CheckpointConfig  `json:"checkpointing"`
	RestartStrategy  RestartConfig     `json:"restartStrategy"`
	Operators        []OperatorInfo    `json:"operators,omitempty"`
	Checkpoints      *CheckpointCounts `json:"checkpoints,omitempty"`
	LatestCheckpoint *CheckpointInfo   `json:"latestCheckpoint,omitempty"`
	// RestorePoint is the newest completed snapshot whose output was
	// committed (a checkpoint, or a stop-with-savepoint): where recovery
	// resumes.
	RestorePoint   string `json:"restorePoint,omitempty"`
	RestorePointID int64  `json:"restorePointId,omitempty"`
	// Owner is the daemon that runs the job in HA mode ("" when the job
	// runs nowhere right now, or outside HA mode).
	Owner string `json:"owner,omitempty"`
	// OwnerPID is the owner's process id on its host (0: unknown), what
	// to kill to try a failover.
	OwnerPID int `json:"ownerPid,omitempty"`
	// Storage is what the job asked of object stores (checkpoints,
	// savepoints, sinks) in this daemon; nil when it used none.
	Storage *StorageCost `json:"storage,omitempty"`
}

// OperatorInfo is one operator's figures, summed over its subtasks.
type OperatorInfo struct {
	UID         string `json:"uid"`
	Type        string `json:"type"`
	Parallelism int    `json:"parallelism"`
	// Inputs are the operators it reads from (none for a source).
	Inputs []OperatorInput `json:"inputs,omitempty"`
	// ChainedTo is the operator whose goroutines run this one's subtasks
	// when the job chains operators (JobSpec.Chaining); "": its own.
	ChainedTo  string           `json:"chainedTo,omitempty"`
	RecordsIn  int64            `json:"recordsIn"`
	RecordsOut int64            `json:"recordsOut"`
	Metrics    map[string]int64 `json:"metrics,omitempty"`
	// Problems say what keeps a running operator from its work, one per
	// subtask and cause ("subtask 0: partition t/0 cannot fetch ...").
	Problems []string `json:"problems,omitempty"`
	// Texts are the running attempt's text figures by name, one per
	// subtask (e.g. each subtask's current Kafka transactional id).
	Texts map[string][]string `json:"texts,omitempty"`
	// Rates per second over the daemon's last sampling window (the
	// dashboard's); zero until two samples exist.
	RecordsInPerSec  float64 `json:"recordsInPerSec"`
	RecordsOutPerSec float64 `json:"recordsOutPerSec"`
	// Event time, when the operator has seen a watermark: the minimum over
	// its subtasks of the input and output watermark (Flink's
	// currentInputWatermark / currentOutputWatermark), in ms since the
	// epoch, and how far the output watermark is behind the wall clock.
	// A source's input watermark is the one it generates.
	InputWatermark  *int64 `json:"inputWatermark,omitempty"`
	OutputWatermark *int64 `json:"outputWatermark,omitempty"`
	WatermarkLagMs  *int64 `json:"watermarkLagMs,omitempty"`
	// Where the subtasks' time went over the daemon's last sampling
	// second, in ms per second (Flink's busyTimeMsPerSecond,
	// backPressuredTimeMsPerSecond, idleTimeMsPerSecond): each the maximum
	// over the operator's subtasks, so the three may add up to more than
	// 1000. Zero until two samples exist.
	BusyTimeMsPerSecond          int64 `json:"busyTimeMsPerSecond"`
	BackPressuredTimeMsPerSecond int64 `json:"backPressuredTimeMsPerSecond"`
	IdleTimeMsPerSecond          int64 `json:"idleTimeMsPerSecond"`
	// Subtasks are the running attempt's subtasks (none once it ended).
	Subtasks []SubtaskInfo `json:"subtasks,omitempty"`
}

// OperatorInput is an edge of the job graph.
type OperatorInput struct {
	UID string `json:"uid"`
	// Partitioning is forward, hash or rebalance.
	Partitioning string `json:"partitioning"`
	// SideOutput is the side output of UID it reads ("": the main output).
	SideOutput string `json:"sideOutput,omitempty"`
}

// CheckpointCounts is the checkpoint tally of a job.
type CheckpointCounts struct {
	// Triggered counts checkpoints and savepoints started by this job.
	Triggered  int `json:"triggered"`
	Completed  int `json:"completed"`
	Failed     int `json:"failed"`
	InProgress int `json:"inProgress"`
	// Restored counts restores from a checkpoint or savepoint (the
	// submission's -s and every restart that resumed from a snapshot).
	Restored int `json:"restored"`
}

// CheckpointInfo is one entry of the checkpoint history.
type CheckpointInfo struct {
	ID          int64     `json:"id"`
	Kind        string    `json:"kind"`
	Status      string    `json:"status"`
	TriggerTime time.Time `json:"triggerTime"`
	DurationMs  int64     `json:"durationMs"`
	Size        int64     `json:"size"`
	// CheckpointedSize is what an incremental checkpoint wrote (Flink's
	// checkpointedSize): its new files and its state files; Size is all
	// it references. Absent: the checkpoint wrote its whole Size.
	CheckpointedSize int64  `json:"checkpointedSize,omitempty"`
	Path             string `json:"path,omitempty"`
	FailureReason    string `json:"failureReason,omitempty"`
	Discarded        bool   `json:"discarded,omitempty"`
	// Storage is what writing the snapshot asked of an object store
	// (nil on a local disk).
	Storage *StorageCost `json:"storage,omitempty"`
}

// CheckpointsInfo is GET /v1/jobs/{id}/checkpoints.
type CheckpointsInfo struct {
	Counts  CheckpointCounts  `json:"counts"`
	Latest  LatestCheckpoints `json:"latest"`
	History []CheckpointInfo  `json:"history"`
	Summary CheckpointSummary `json:"summary"`
}

// LatestCheckpoints names the newest checkpoint of each outcome.
type LatestCheckpoints struct {
	Completed *CheckpointInfo `json:"completed,omitempty"`
	Savepoint *CheckpointInfo `json:"savepoint,omitempty"`
	Failed    *CheckpointInfo `json:"failed,omitempty"`
	Restored  *RestoredInfo   `json:"restored,omitempty"`
}

// RestoredInfo says what the current attempt restored from.
type RestoredInfo struct {
	ID          int64     `json:"id"`
	Kind        string    `json:"kind"`
	Path        string    `json:"path"`
	RestoreTime time.Time `json:"restoreTime"`
}

// CheckpointSummary aggregates completed checkpoints.
type CheckpointSummary struct {
	DurationMs MinAvgMax `json:"durationMs"`
	Size       MinAvgMax `json:"size"`
}

// MinAvgMax is a small statistic.
type MinAvgMax struct {
	Min    int64 `json:"min"`
	Median int64 `json:"median"`
	Avg    int64 `json:"avg"`
	Max    int64 `json:"max"`
}

// SavepointRequest is POST /v1/jobs/{id}/savepoints and /stop.
type SavepointRequest struct {
	TargetDir string `json:"targetDirectory,omitempty"`
	Drain     bool   `json:"drain,omitempty"`
}

// SavepointResponse gives the path of a completed savepoint.
type SavepointResponse struct {
	Path string `json:"path"`
	ID   int64  `json:"checkpointId"`
	// RestoreCommand restores the job from it (RestoreCommand); empty
	// when NoRestore says why the savepoint is not one to restore.
	RestoreCommand string `json:"restoreCommand,omitempty"`
	// NoRestore: why no restore command is given (a drained stop).
	NoRestore string `json:"noRestore,omitempty"`
}

// DrainedNoRestore is why a savepoint of `flinkgo stop --drain` is not one
// to restore.
const DrainedNoRestore = "the job was drained (--drain): its input was ended and every window and timer fired, so a job restored from this savepoint would fire them again and repeat their output. Keep it as the job's final state; to pause a job you will resume, use `flinkgo stop` without --drain"

// CancelResponse says what a cancel left behind for a later restore.
type CancelResponse struct {
	State JobState `json:"state"`
	// Warning tells how much a restore will reprocess (stderr of cancel).
	Warning string `json:"warning,omitempty"`
	// ResumeFrom is the snapshot a restore can use ("" when none is kept).
	ResumeFrom string `json:"resumeFrom,omitempty"`
	// RestoreCommand restores the job from ResumeFrom (RestoreCommand).
	RestoreCommand string `json:"restoreCommand,omitempty"`
}

// Overview is GET /v1/overview: the dashboard's first page.
type Overview struct {
	Jobs []JobSummary `json:"jobs"`
	// Attention lists what a user should look at, worst first.
	Attention []Attention `json:"attention"`
	// Counts of jobs by state.
	States map[JobState]int `json:"states"`
}

// JobSummary is one job of the overview.
type JobSummary struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	State      JobState   `json:"state"`
	SubmitTime time.Time  `json:"submitTime"`
	EndTime    *time.Time `json:"endTime,omitempty"`
	// UptimeMs is the time since submission (until the end, when ended).
	UptimeMs int64 `json:"uptimeMs"`
	// Records entering the job (emitted by its sources) and leaving it
	// (received by its sinks), per second.
	RecordsInPerSec  float64 `json:"recordsInPerSec"`
	RecordsOutPerSec float64 `json:"recordsOutPerSec"`
	Restarts         int     `json:"restarts"`
	// LastCheckpoint is the newest completed checkpoint, if any.
	LastCheckpoint    *CheckpointInfo `json:"lastCheckpoint,omitempty"`
	FailedCheckpoints int             `json:"failedCheckpoints"`
	// Sparkline is RecordsInPerSec over the last 5 minutes, one point per
	// 5 s, oldest first (fewer points for a younger job).
	Sparkline []float64 `json:"sparkline"`
}

// Attention is one item of the overview's "needs attention" list.
type Attention struct {
	JobID   string `json:"jobId"`
	JobName string `json:"jobName"`
	// Severity is "error" (the job FAILED) or "warning".
	Severity string    `json:"severity"`
	Message  string    `json:"message"`
	Time     time.Time `json:"time,omitempty"`
}

// SavepointEntry is one savepoint the daemon knows (GET /v1/savepoints).
type SavepointEntry struct {
	Path         string    `json:"path"`
	JobID        string    `json:"jobId"`
	JobName      string    `json:"jobName"`
	CheckpointID int64     `json:"checkpointId"`
	Kind         string    `json:"kind"`
	Time         time.Time `json:"time"`
	Size         int64     `json:"size"`
	// Complete is false when the files do not verify; Problem says why.
	Complete bool   `json:"complete"`
	Problem  string `json:"problem,omitempty"`
	// RestoreCommand restores its job from it, with the job's spec file
	// when the daemon knows the job (RestoreCommand).
	RestoreCommand string `json:"restoreCommand,omitempty"`
}

// SessionInfo is GET /v1/ui/session: whether the browser holds a session
// that may change state (its cookie, and its anti-CSRF token echoed in the
// X-Flinkgo-CSRF header).
type SessionInfo struct {
	LoggedIn bool `json:"loggedIn"`
}

// LoginLink is POST /v1/ui/login-links: a one-time dashboard login URL.
type LoginLink struct {
	URL       string    `json:"url"`
	Dashboard string    `json:"dashboard"`
	Expires   time.Time `json:"expires"`
}

// SavepointDetail is GET /v1/savepoints/inspect?path=P: what `flinkgo
// savepoint inspect` shows, for a savepoint the daemon knows.
type SavepointDetail struct {
	SavepointEntry
	MaxParallelism  int                `json:"maxParallelism"`
	SpecFingerprint string             `json:"specFingerprint"`
	Spec            string             `json:"spec"`
	Operators       []SnapshotOperator `json:"operators"`
}

// SnapshotOperator is one operator's state in a snapshot.
type SnapshotOperator struct {
	UID         string `json:"uid"`
	Type        string `json:"type"`
	Parallelism int    `json:"parallelism"`
	Bytes       int64  `json:"bytes"`
	Keys        int64  `json:"keys,omitempty"`
}

// DrainResponse is POST /v1/daemon/drain: the jobs the daemon stopped
// with a savepoint for other daemons of its HA cluster to resume.
type DrainResponse struct {
	Daemon string   `json:"daemon"`
	Jobs   []string `json:"jobs"`
}
