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
	for _, from := range v.Op.From {
		ref, ok := api.ResolveFrom(from, index)
		u := byUID[ref.UID]
		if !ok || u == nil || u == v || ref.Tag != "" || u.schema == nil || (s != nil && !u.schema.Same(s)) {
			return nil
		}
		s = u.schema
	}
	return s
}

// outputSchema is the schema of the records v emits: a source's
// declaration, or its input's when its type keeps records as they are.
func outputSchema(v *Vertex, in *api.Schema) *api.Schema {
	if len(v.Op.From) == 0 || v.Def.KeepsSchema {
		return in
	}
	return nil
}
