package runtime

// Output is where an operator emits records. The engine buffers per
// downstream channel and sends batches on its own schedule (full batch,
// before waiting for input, before any barrier), so records keep their order
// relative to checkpoints. Emit may block while downstream is full
// (backpressure); it never fails: when the job is being canceled the record
// is dropped and the engine ends the subtask after the current call.
//
// An Output is used only from the subtask's goroutine, during the call that
// received it (Process, Finish). Emitted records may share memory with the
// input batch; the engine does not copy them.
type Output interface {
	// Emit sends r on the main output.
	Emit(r Record)
	// EmitTo sends r on the side output named tag, which the operator's
	// Plan declares in SideOutputs; operators read it with
	// from: [<uid>.<tag>]. Nothing is sent when no operator reads it.
	EmitTo(tag string, r Record)
}

// BatchForwarder is an Output that can take over, whole, an input batch
// whose records the operator forwards as they are (a filter, having moved
// the records it keeps to the front in order: during Process the batch is
// the operator's to rearrange). ForwardBatch emits b's records in order,
// as Emit would one by one, and reports whether it took b over: then b is
// the Output's, and neither the operator nor the engine touches it again.
// When it returns false nothing was emitted (the Output buffers records
// of its own, or rewrites them): Emit them. Handing on a batch holding
// few records makes more, emptier batches downstream: an operator keeping
// few buffers them with Emit instead (a filter: fewer than half). It saves
// copying each record into an output batch, which is a write to a cache
// line the next reader's core then fetches (a record is 64 bytes).
type BatchForwarder interface {
	ForwardBatch(b *Batch) bool
}
