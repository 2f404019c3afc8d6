package engine

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/flinkgo/flinkgo/internal/sql/parser"
	"github.com/flinkgo/flinkgo/internal/sql/planner"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// IsSQL reports whether file is a Flink SQL script (by its .sql
// extension): Compile plans it into a spec (docs/sql.md).
func IsSQL(file string) bool { return strings.EqualFold(filepath.Ext(file), ".sql") }

// PlanSQL plans the SQL script src into a job spec (YAML) and where each
// of its operators comes from; problems are an *api.SpecError at the
// script's line:column.
func PlanSQL(file string, src []byte) (*planner.Plan, error) {
	name := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	p, err := planner.Compile(name, string(src))
	if err != nil {
		var errs parser.Errors
		if !errors.As(err, &errs) {
			return nil, err
		}
		se := &api.SpecError{}
		for _, e := range errs {
			se.Errors = append(se.Errors, api.FieldError{File: file, Pos: api.Pos{Line: e.Pos.Line, Column: e.Pos.Col}, Msg: e.Msg})
		}
		return nil, se
	}
	return p, nil
}

// compileSQL plans a script and compiles the spec it makes. The graph
// keeps the script's file name and the generated spec as its Source:
// snapshots record the spec, which compiles by itself.
func compileSQL(compile func(src []byte) (*Graph, error), file string, src []byte) (*Graph, error) {
	p, err := PlanSQL(file, src)
	if err != nil {
		return nil, err
	}
	g, err := compile([]byte(p.Spec))
	var se *api.SpecError
	if err != nil && errors.As(err, &se) {
		return nil, sqlPositions(se, file, p)
	}
	return g, err
}

var opIndex = regexp.MustCompile(`^operators\[(\d+)\]`)

// sqlAdvice says in SQL what a spec's errors advise in YAML.
var sqlAdvice = strings.NewReplacer("(checkpointing: {interval: 10s})", "(SET 'execution.checkpointing.interval' = '10s';)")

// sqlPositions moves the problems of a generated spec to the statements
// that made its operators (the planner checks what it can; what is left,
// such as an option value the connector refuses, is reported here).
func sqlPositions(se *api.SpecError, file string, p *planner.Plan) error {
	out := &api.SpecError{}
	for _, e := range se.Errors {
		e.Msg = fmt.Sprintf("%s (in the generated spec: flinkgo explain %s)", sqlAdvice.Replace(e.Msg), file)
		e.File, e.Pos = file, api.Pos{Line: 1, Column: 1}
		if m := opIndex.FindStringSubmatch(e.Field); m != nil {
			if i, err := strconv.Atoi(m[1]); err == nil && i < len(p.Origins) {
				e.Pos = api.Pos{Line: p.Origins[i].Line, Column: p.Origins[i].Col}
				// An option's value: at the WITH option, by its name.
				opt, _, _ := strings.Cut(strings.TrimPrefix(e.Field[len(m[0]):], "."), ".")
				if opt == "" { // "operators[3]: deliveryGuarantee: …"
					if o, rest, ok := strings.Cut(e.Msg, ": "); ok && p.With[i][o].Key != "" {
						opt, e.Msg = o, rest
					}
				}
				if w, ok := p.With[i][opt]; ok {
					e.Pos = api.Pos{Line: w.P.Line, Column: w.P.Col}
					e.Field = "'" + w.Key + "'"
				}
			}
		}
		out.Errors = append(out.Errors, e)
	}
	return out
}
