package engine

import "github.com/flinkgo/flinkgo/pkg/api"

// inputSchema is the schema of the records v reads: a source's own
// declaration (its eventTime.timestamp reads its records), else the one
// schema the main outputs of all its inputs carry; nil when an input's is
// unknown, they differ, or an input is a side output (whose records the
// operator shapes as it likes). It follows the spec's from, not the wired
// graph, so expressions past an operator with wrong options are checked
// in the same pass.
func inputSchema(v *Vertex, byUID map[string]*Vertex, index map[string]int) *api.Schema {
	if len(v.Op.From) == 0 {
		if v.Op.Schema == nil {
			return nil
		}
		return &api.Schema{Source: v.Op.UID, Fields: v.Op.Schema}
	}
	var s *api.Schema
	for _, u := range inputSchemas(v, byUID, index) {
		if u == nil || (s != nil && !u.Same(s)) {
			return nil
		}
		s = u
	}
	return s
}

// inputSchemas is the schema of the main output of each of v's inputs, in
// the order of its from (nil where unknown or a side output): a join's
// left and right are checked each against its own.
func inputSchemas(v *Vertex, byUID map[string]*Vertex, index map[string]int) []*api.Schema {
	out := make([]*api.Schema, len(v.Op.From))
	for i, from := range v.Op.From {
		ref, ok := api.ResolveFrom(from, index)
		if u := byUID[ref.UID]; ok && u != nil && u != v && ref.Tag == "" {
			out[i] = u.schema
		}
	}
	return out
}

// outputSchema is the schema of the records v emits: a source's
// declaration, or its input's when its type keeps records as they are.
func outputSchema(v *Vertex, in *api.Schema) *api.Schema {
	if len(v.Op.From) == 0 || v.Def.KeepsSchema {
		return in
	}
	return nil
}
