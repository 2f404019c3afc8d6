package runtime

import (
	"fmt"
	"sort"

	"github.com/flinkgo/flinkgo/pkg/api"
)

// Registry is the set of operator types a binary knows: the built-ins and
// whatever a custom binary adds. It is a value, built once at start-up and
// handed to the daemon and the CLI; it is read-only once built, so it may be
// shared between goroutines. A type has at most one definition per kind: a
// connector such as kafka is both a source (no inputs) and a sink (with
// inputs).
type Registry struct {
	defs map[string]map[api.OperatorKind]Definition
}

// NewRegistry returns a registry of defs; see Add for what is refused.
func NewRegistry(defs ...Definition) (*Registry, error) {
	r := &Registry{defs: map[string]map[api.OperatorKind]Definition{}}
	for _, d := range defs {
		if err := r.Add(d); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// MustRegistry is NewRegistry for definitions fixed at compile time: a
// conflict is a bug and panics.
func MustRegistry(defs ...Definition) *Registry {
	r, err := NewRegistry(defs...)
	if err != nil {
		panic(err)
	}
	return r
}

// Add registers d. It refuses a definition without a type, kind or
// Configure, a type and kind registered twice, and a type that would pair
// anything but one source with one sink or operator.
func (r *Registry) Add(d Definition) error {
	switch {
	case d.Type == "":
		return fmt.Errorf("operator definition without a type")
	case d.Configure == nil:
		return fmt.Errorf("operator type %q: definition without Configure", d.Type)
	case d.Kind != api.KindSource && d.Kind != api.KindOperator && d.Kind != api.KindSink:
		return fmt.Errorf("operator type %q: unknown kind %d", d.Type, d.Kind)
	}
	have := r.defs[d.Type]
	if _, dup := have[d.Kind]; dup {
		return fmt.Errorf("operator type %q is defined twice as a %s", d.Type, d.Kind)
	}
	if len(have) > 0 {
		_, haveSource := have[api.KindSource]
		if (d.Kind == api.KindSource) == haveSource {
			return fmt.Errorf("operator type %q: one type may only pair a source with a sink or operator", d.Type)
		}
	}
	if have == nil {
		have = map[api.OperatorKind]Definition{}
		r.defs[d.Type] = have
	}
	have[d.Kind] = d
	return nil
}

// With returns a new registry holding r's definitions and defs.
func (r *Registry) With(defs ...Definition) (*Registry, error) {
	return NewRegistry(append(r.Definitions(), defs...)...)
}

// Lookup returns the definition of typ for an operator with or without
// inputs: a source when it has none, an operator or sink when it has some.
// With only one definition, that one is returned either way (validation
// then reports the misplaced inputs).
func (r *Registry) Lookup(typ string, hasInputs bool) (Definition, bool) {
	defs := r.defs[typ]
	if len(defs) == 1 {
		for _, d := range defs {
			return d, true
		}
	}
	for k, d := range defs {
		if (k == api.KindSource) != hasInputs {
			return d, true
		}
	}
	return Definition{}, false
}

// PebbleTypes returns the types whose keyed state runs on the pebble
// state backend, sorted.
func (r *Registry) PebbleTypes() []string {
	var out []string
	for typ, defs := range r.defs {
		for _, d := range defs {
			if d.PebbleState {
				out = append(out, typ)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

// Definitions returns every definition, by type then kind.
func (r *Registry) Definitions() []Definition {
	var out []Definition
	for _, defs := range r.defs {
		for _, d := range defs {
			out = append(out, d)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Type != out[j].Type {
			return out[i].Type < out[j].Type
		}
		return out[i].Kind < out[j].Kind
	})
	return out
}

// Kind implements api.Catalog: the kind of a type used without inputs, or
// its only kind.
func (r *Registry) Kind(typ string) (api.OperatorKind, bool) {
	d, ok := r.Lookup(typ, false)
	return d.Kind, ok
}

// KindFor implements api.KindResolver for types that are both a source and
// a sink.
func (r *Registry) KindFor(typ string, hasInputs bool) (api.OperatorKind, bool) {
	d, ok := r.Lookup(typ, hasInputs)
	return d.Kind, ok
}

// Types implements api.Catalog.
func (r *Registry) Types() []string {
	out := make([]string, 0, len(r.defs))
	for t := range r.defs {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}
