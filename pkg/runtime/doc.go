// Package runtime is flinkgo's extension API: what an operator, source or
// sink written in Go implements, and what the engine gives it. Built-in
// operators and connectors use nothing else; a custom binary adds its own
// types with pkg/flinkgo (see examples/custom-operator).
//
// # The contract
//
// An operator type is a Definition: a Type name used in job specs, a Kind
// (source, operator, sink) and Configure, which decodes and checks the
// operator's options (reporting problems at their line) and returns a Plan
// saying how to build one instance per subtask and how it is wired
// (KeyedInput: it keeps state per key and follows a keyBy).
//
// Each subtask runs on a goroutine of its own, and every method of its
// instance is called on that goroutine, one at a time. (In a job with
// chaining: true, an operator without timers or checkpoint callbacks that
// reads one producer one to one, a keyed one at parallelism 1 included,
// runs on that producer's goroutine instead: still one call at a time,
// never two goroutines.)
//
//  1. Open(ctx): restored state is already in ctx (OperatorState lists,
//     keyed state handles declared here with NewValue, NewMap, NewList).
//  2. Source.Poll or Operator.Process, many times. Process gets a Batch and
//     an Output to Emit to (nil for sinks). Records may share memory with
//     the batch: copy what you keep beyond the call.
//  3. Between calls, at a checkpoint barrier: SnapshotState(id) (Snapshotter;
//     sources always). Put what must survive a failure into
//     ctx.OperatorState(); keyed state is snapshotted by the engine. A sink
//     pre-commits here: flush, and record its committables.
//  4. When checkpoint id is durable: NotifyCheckpointComplete(id)
//     (CheckpointListener). A sink commits everything of checkpoints <= id.
//     It must be idempotent: after a failure the job restores from the last
//     complete checkpoint and the sink commits its restored committables
//     again, in Open. NotifyCheckpointAborted(id): id will never complete.
//  5. Finish(out) once all inputs ended (Finisher), then Close, always,
//     even after an error.
//
// An error from any method fails the job over: every subtask is canceled
// and, per the restart strategy, the job restores from its latest complete
// checkpoint. Only Poll may block, and only briefly (about 50 ms, or until
// ctx.Wakeup() fires).
//
// Everything an operator writes to disk goes through ctx.FS() (pkg/vfs), so
// tests can crash the filesystem at any step (vfs.MemFS.CrashClone) and
// inject faults (vfs.WithFaults). State items are encoded with
// state.NewEncoder and decoded with state.NewDecoder: versioned, with
// damage reported alike by every connector.
package runtime
