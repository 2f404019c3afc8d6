package runtime

// FaultHook lets tests make named points in operators and the engine fail,
// so a connector can be tested through the same fault harness as the
// built-in ones. Fire returns an error to fail the operation at point, or
// nil; it may also panic or exit the process. Production runs have none.
type FaultHook interface {
	Fire(point string, attrs ...any) error
}
