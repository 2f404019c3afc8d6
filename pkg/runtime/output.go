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
