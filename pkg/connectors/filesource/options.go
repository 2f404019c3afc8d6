package filesource

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// options of the file source, as written in a job spec.
type options struct {
	Path          string        `yaml:"path,required"` // a file or a directory, absolute or s3://
	Format        string        `yaml:"format"`        // lines (default), json, csv or parquet
	Monitor       *api.Duration `yaml:"monitor"`       // list the path again this often (omit: bounded)
	OnDecodeError string        `yaml:"onDecodeError"` // fail (default) or skip

	// Format csv.
	Delimiter  *string  `yaml:"delimiter"`  // default ","
	Header     *bool    `yaml:"header"`     // default true
	Columns    []string `yaml:"columns"`    // the member names (default: the header's)
	InferTypes *bool    `yaml:"inferTypes"` // default true
}

// Definitions returns the operator types of this package, for a
// runtime.Registry.
func Definitions() []runtime.Definition {
	return []runtime.Definition{
		{Type: "file", Kind: api.KindSource,
			Doc: "reads a file or every file below a directory (local or s3://) as lines, json (one value per line), csv " +
				"(rows as JSON objects: delimiter, header, columns, inferTypes) or parquet (rows as JSON objects); bounded, or monitor: 10s to read new files; " +
				"onDecodeError (fail|skip); exactly-once positions in checkpoints",
			Configure: configure},
	}
}

// settings are validated options, shared read-only by the subtasks.
type settings struct {
	root    string
	format  Format
	monitor time.Duration // 0: bounded
	skipped *atomic.Int64 // records skipped by onDecodeError: skip, all subtasks
}

func configure(c *runtime.ConfigContext) *runtime.Plan {
	var o options
	c.Decode(&o)
	s, ok := validate(c, &o)
	if !ok {
		return nil
	}
	// Positions are relative to the path, and byte offsets mean a place
	// between two records only in the format that recorded them.
	meaning := &runtime.StateMeaning{Values: map[string]string{"path": s.root, "format": formatName(o.Format)},
		Judge: func(name, was, now string) (bool, string) {
			return false, fmt.Sprintf("the snapshot's file positions were taken with %s %q (a restore would read other files or from the middle of records)", name, was)
		}}
	return &runtime.Plan{Bounded: s.monitor == 0, State: meaning, SkipBadTimestamps: o.OnDecodeError == "skip",
		NewSource: func() runtime.Source { return &source{set: s} }}
}

func formatName(f string) string {
	if f == "" || f == "line" {
		return "lines"
	}
	return f
}

// validate checks every option, reporting each problem at its line.
func validate(c *runtime.ConfigContext, o *options) (*settings, bool) {
	s := &settings{root: vfs.Clean(o.Path), skipped: new(atomic.Int64)}
	ok := true
	bad := func(field, format string, args ...any) {
		c.Errorf(field, format, args...)
		ok = false
	}
	if c.Has("path") && strings.TrimSpace(o.Path) == "" {
		bad("path", "must name the file or directory to read")
	} else if o.Path != "" && !vfs.IsAbs(o.Path) {
		bad("path", "%q is a relative path: write it absolute (the daemon reads the files and does not share your working directory), e.g. /data/%s", o.Path, filepath.Base(filepath.Clean(o.Path)))
	}
	policy := decodePolicy{skipped: s.skipped}
	switch o.OnDecodeError {
	case "", "fail":
	case "skip":
		policy.skip = true
	default:
		bad("onDecodeError", "must be fail or skip, got %q", o.OnDecodeError)
	}
	if o.Monitor != nil {
		if o.Monitor.D() <= 0 {
			bad("monitor", "must be more than 0, e.g. \"10s\" (omit it to read the files there are and end)")
		}
		s.monitor = o.Monitor.D()
	}
	csv := false
	switch formatName(o.Format) {
	case "lines":
		s.format = &lineFormat{policy: policy}
	case "json":
		s.format = &lineFormat{json: true, policy: policy}
	case "csv":
		csv = true
		s.format = validateCSV(o, policy, bad)
	case "parquet":
		s.format = parquetFormat{}
	default:
		bad("format", "must be lines, json, csv or parquet, got %q", o.Format)
	}
	if !csv {
		for _, f := range []string{"delimiter", "header", "columns", "inferTypes"} {
			if c.Has(f) {
				bad(f, "applies to format csv only")
			}
		}
	}
	return s, ok
}

func validateCSV(o *options, policy decodePolicy, bad func(string, string, ...any)) *csvFormat {
	f := &csvFormat{delim: ',', header: true, infer: true, columns: o.Columns, policy: policy}
	if o.Delimiter != nil {
		d := *o.Delimiter
		if len(d) != 1 || d[0] == '"' || d[0] == '\r' || d[0] == '\n' || d[0] >= 0x80 {
			bad("delimiter", "must be one ASCII character other than a quote or a newline, e.g. \",\", \";\" or \"\\t\", got %q", d)
		} else {
			f.delim = d[0]
		}
	}
	if o.Header != nil {
		f.header = *o.Header
	}
	if o.InferTypes != nil {
		f.infer = *o.InferTypes
	}
	if !f.header && len(o.Columns) == 0 {
		bad("header", "false needs the columns' names, in order, e.g. columns: [id, name, ts]")
	}
	seen := map[string]bool{}
	for _, col := range o.Columns {
		switch {
		case col == "":
			bad("columns", "a column name must not be empty")
		case seen[col]:
			bad("columns", "column %q is listed twice", col)
		}
		seen[col] = true
	}
	return f
}
