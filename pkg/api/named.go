package api

import (
	"reflect"

	"github.com/goccy/go-yaml/ast"
)

// NamedStrings is a mapping of names to strings that keeps the order the
// spec wrote them in (a window's aggregates: name → function).
type NamedStrings []NamedString

// NamedString is one entry of a NamedStrings.
type NamedString struct {
	Name, Value string
	// Path is the entry's field path, for errors at its line.
	Path string
}

var namedStringsType = reflect.TypeOf(NamedStrings(nil))

func (d *Decoder) decodeNamedStrings(n ast.Node, path string, v reflect.Value) {
	values, ok := mappingValues(n)
	if !ok {
		d.typeError(n, path, "a mapping of names to strings")
		return
	}
	out := make(NamedStrings, 0, len(values))
	for _, kv := range values {
		key, _ := scalarString(d.resolve(kv.Key))
		p := joinPath(path, key)
		var s string
		d.decode(kv.Value, p, reflect.ValueOf(&s).Elem())
		out = append(out, NamedString{Name: key, Value: s, Path: p})
	}
	v.Set(reflect.ValueOf(out))
}
