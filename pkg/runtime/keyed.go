package runtime

import "github.com/flinkgo/flinkgo/pkg/state"

// Keyed state handles. Declare them in Open, by a name unique within the
// operator; state restored from a snapshot under that name is decoded with
// the handle's codec. A handle reads and writes the current key
// (Context.SetCurrentKey). Keyed state is snapshotted by the engine at every
// checkpoint and redistributed by key group when the job is restored with
// another parallelism; operators do nothing for it.

// NewValue declares a value per key (Flink's ValueState).
func NewValue[T any](ctx *Context, name string, codec state.Codec[T]) (*state.Value[T], error) {
	b, err := ctx.keyed()
	if err != nil {
		return nil, err
	}
	return state.NewValue(b, name, codec)
}

// NewReducing declares a value per key that Add combines with reduce
// (Flink's ReducingState).
func NewReducing[T any](ctx *Context, name string, codec state.Codec[T], reduce func(acc, v T) (T, error)) (*state.Reducing[T], error) {
	b, err := ctx.keyed()
	if err != nil {
		return nil, err
	}
	return state.NewReducing(b, name, codec, reduce)
}

// NewSliced declares map state from time slices to a value per key, kept
// slice by slice (state.Sliced): for operators that read a time slice for
// every key at once, like a window firing for all its keys.
func NewSliced[V any](ctx *Context, name string, vc state.Codec[V]) (*state.Sliced[V], error) {
	b, err := ctx.keyed()
	if err != nil {
		return nil, err
	}
	return state.NewSliced(b, name, vc)
}

// NewMap declares a map of user keys to values per key (Flink's MapState).
func NewMap[K comparable, V any](ctx *Context, name string, kc state.Codec[K], vc state.Codec[V]) (*state.Map[K, V], error) {
	b, err := ctx.keyed()
	if err != nil {
		return nil, err
	}
	return state.NewMap(b, name, kc, vc)
}

// NewList declares a list of values per key (Flink's ListState).
func NewList[T any](ctx *Context, name string, codec state.Codec[T]) (*state.List[T], error) {
	b, err := ctx.keyed()
	if err != nil {
		return nil, err
	}
	return state.NewList(b, name, codec)
}
