package api

import (
	"fmt"
	"sort"
	"strings"
)

// Schema types a source may declare for its records' fields (schema:
// {idx: int, user: string}). Expressions downstream are then type-checked
// at submit and a field the schema does not have is an error.
const (
	FieldString = "string"
	FieldInt    = "int"
	FieldFloat  = "float" // any JSON number
	FieldBool   = "bool"
	FieldList   = "list" // a JSON array
	FieldMap    = "map"  // a JSON object
	FieldAny    = "any"  // present, of any type: not type-checked
)

// fieldTypes are the types a schema field may have.
func fieldTypes() []string {
	return []string{FieldString, FieldInt, FieldFloat, FieldBool, FieldList, FieldMap, FieldAny}
}

// reservedFields are the names expressions give the record itself (its
// payload, key and event time); a JSON field of the same name is shadowed.
func reservedFields() []string { return []string{"value", "key", "timestamp"} }

// Schema is the record fields operators downstream of a source see: what
// the source declared, passed on by operators that keep their input's
// records as they are (filter, keyBy).
type Schema struct {
	// Source is the uid of the source that declared it.
	Source string
	// Fields maps each field name to its type (one of the Field constants).
	Fields map[string]string
}

// Names are the schema's field names, sorted.
func (s *Schema) Names() []string {
	out := make([]string, 0, len(s.Fields))
	for k := range s.Fields {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Same reports whether two schemas declare the same fields and types.
func (s *Schema) Same(o *Schema) bool {
	if s == nil || o == nil || len(s.Fields) != len(o.Fields) {
		return false
	}
	for k, t := range s.Fields {
		if o.Fields[k] != t {
			return false
		}
	}
	return true
}

// validateSchema checks an operator's schema block: sources only, known
// types, no reserved names.
func (p *ParsedJob) validateSchema(path string, op OperatorSpec, kind OperatorKind, known bool) {
	if op.Schema == nil {
		return
	}
	d := p.Dec
	if known && kind != KindSource {
		d.ErrorAt(path+".schema", "%q (type %s) is not a source: a schema belongs on the source whose records have those fields", op.UID, op.Type)
		return
	}
	for _, name := range SortedKeys(op.Schema) {
		field := path + ".schema." + name
		for _, r := range reservedFields() {
			if name == r {
				d.ErrorAt(field, "%q is the name expressions give the record's %s (it would shadow the JSON field): rename the field with a map first, or leave it out of the schema", name, reservedMeaning(name))
			}
		}
		typ := op.Schema[name]
		if _, ok := EnumValue(typ, fieldTypes()...); ok {
			op.Schema[name], _ = EnumValue(typ, fieldTypes()...)
			continue
		}
		msg := fmt.Sprintf("unknown field type %q", typ)
		if c := closest(typ, append(fieldTypes(), "integer", "number", "boolean", "array", "object")); c != "" {
			msg += fmt.Sprintf("; did you mean %q?", schemaAlias(c))
		}
		d.ErrorAt(field, "%s (types: %s)", msg, strings.Join(fieldTypes(), ", "))
	}
}

// schemaAlias maps JSON Schema's type names to ours, for the hint.
func schemaAlias(t string) string {
	switch t {
	case "integer":
		return FieldInt
	case "number":
		return FieldFloat
	case "boolean":
		return FieldBool
	case "array":
		return FieldList
	case "object":
		return FieldMap
	}
	return t
}

func reservedMeaning(name string) string {
	switch name {
	case "value":
		return "payload (as a string)"
	case "key":
		return "key"
	}
	return "event time"
}
