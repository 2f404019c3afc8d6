package api

import "fmt"

// InputDeclarer is implemented by catalogs whose operator types may take
// their inputs from options instead of from: a join names them in
// left: {from: …} and right: {from: …}. The parser fills the operator's From
// with them, in the order given, so the rest of validation and the graph see
// ordinary inputs.
type InputDeclarer interface {
	// InputOptions names the options holding the inputs of typ (none: it
	// uses from).
	InputOptions(typ string) []string
}

// inputsFromOptions fills the From of operators whose type declares input
// options. A missing input option or one without from is reported here
// (the graph cannot be checked without it); other problems of the options
// are left to the type's Configure, which decodes them; a from written
// beside them is an error.
func (p *ParsedJob) inputsFromOptions(cat Catalog) {
	decl, ok := cat.(InputDeclarer)
	if !ok {
		return
	}
	for i := range p.Spec.Operators {
		op := &p.Spec.Operators[i]
		names := decl.InputOptions(op.Type)
		if len(names) == 0 {
			continue
		}
		path := fmt.Sprintf("operators[%d]", i)
		if len(op.From) > 0 {
			p.Dec.ErrorAt(path+".from", "%q (type %s) takes its inputs from %s; remove from", op.UID, op.Type, optionFroms(names))
			continue
		}
		op.FromFields = nil
		for _, name := range names {
			n, ok := op.Options[name]
			if !ok {
				p.Dec.ErrorAt(path, "%q (type %s) needs %s: {from: <uid of an upstream operator>, …}", op.UID, op.Type, name)
				continue
			}
			// A scratch decoder: its errors are Configure's to report.
			d := NewDecoder(p.File)
			var in struct {
				From string          `yaml:"from"`
				Rest map[string]Node `yaml:",remain"`
			}
			sub := path + "." + name
			d.Decode(n, sub, &in)
			if in.From == "" {
				if len(d.Errors.Errors) == 0 { // else not a mapping: Configure says so
					p.Dec.ErrorAt(sub, "%s needs from: the uid of its upstream operator", name)
				}
				continue
			}
			j := len(op.From)
			op.From = append(op.From, in.From)
			op.FromFields = append(op.FromFields, name+".from")
			pos := d.PosOf(sub + ".from")
			p.Dec.Positions[fmt.Sprintf("%s.from[%d]", path, j)] = pos
			p.Dec.Positions[sub+".from"] = pos
		}
	}
}

func optionFroms(names []string) string {
	s := ""
	for i, n := range names {
		switch {
		case i == 0:
		case i == len(names)-1:
			s += " and "
		default:
			s += ", "
		}
		s += n + ".from"
	}
	return s
}

// inputOptions returns the input options of op's type (nil: it uses from).
func inputOptions(cat Catalog, op OperatorSpec) []string {
	if decl, ok := cat.(InputDeclarer); ok {
		return decl.InputOptions(op.Type)
	}
	return nil
}

// FromPath is the spec path of input j of op at path ("operators[2]"): its
// from entry, or the option it was taken from (operators[2].left.from).
func FromPath(path string, op *OperatorSpec, j int) string {
	if j < len(op.FromFields) {
		return path + "." + op.FromFields[j]
	}
	return fmt.Sprintf("%s.from[%d]", path, j)
}
