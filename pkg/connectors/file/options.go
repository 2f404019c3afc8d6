package file

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// options of the file sink, as written in a job spec.
type options struct {
	Path         string  `yaml:"path,required"` // base directory
	Bucket       *string `yaml:"bucket"`        // Go layout, Java pattern or none (default yyyy-MM-dd--HH)
	BucketTime   string  `yaml:"bucketTime"`    // processing (default) or event
	Timezone     string  `yaml:"timezone"`      // for bucket names; default the daemon's local time
	Rolling      rolling `yaml:"rolling"`
	PartPrefix   *string `yaml:"partPrefix"` // default "part"
	PartSuffix   string  `yaml:"partSuffix"` // default ""
	Format       string  `yaml:"format"`     // line (default), json, csv or parquet
	MaxOpenFiles *int    `yaml:"maxOpenFiles"`

	// Columns (formats csv and parquet), decoded by the format: csv
	// takes the members written, in order (required): [id, name];
	// parquet the Parquet file's columns, in order, each {name, type,
	// nullable} (default: the source's schema).
	Columns api.Node `yaml:"columns"`
	// Format csv: the delimiter (default ","), and whether each part
	// file starts with a header row (default true).
	Delimiter *string `yaml:"delimiter"`
	Header    *bool   `yaml:"header"`
	// Format parquet: snappy (default), zstd, gzip or none.
	Compression string `yaml:"compression"`
}

// rolling is the rolling policy's options.
type rolling struct {
	MaxPartSize        *api.ByteSize `yaml:"maxPartSize"`
	RolloverInterval   *api.Duration `yaml:"rolloverInterval"`
	InactivityInterval *api.Duration `yaml:"inactivityInterval"`
	OnCheckpoint       bool          `yaml:"onCheckpoint"`
}

// needsCheckpointing is Flink's warning about a FileSink without
// checkpointing; the runtime adds how to enable it.
const needsCheckpointing = "the file sink makes part files visible only when a checkpoint completes: " +
	"without checkpointing an unbounded job would leave every file hidden in progress or pending forever"

// Definitions returns the operator types of this package, for a
// runtime.Registry.
func Definitions() []runtime.Definition {
	return []runtime.Definition{
		{Type: "file", Kind: api.KindSink,
			Doc: "exactly-once part files under path, made visible when checkpoints complete; bucket, bucketTime, timezone, " +
				"rolling {maxPartSize, rolloverInterval, inactivityInterval, onCheckpoint}, partPrefix, partSuffix, format (line|json|csv|parquet), maxOpenFiles; " +
				"csv: columns (required), delimiter, header; " +
				"parquet: columns [{name, type, nullable}] (default: the source's schema), compression (snappy|zstd|gzip|none)",
			Configure: configure},
	}
}

// settings are validated options, shared read-only by the subtasks.
type settings struct {
	dir        string
	bucket     string
	loc        *time.Location
	eventTime  bool
	naming     naming
	policy     policy
	format     format
	csv        csvOptions
	bulk       *bulkFormat // format parquet
	maxOpen    int
	bucketKind string
}

func configure(c *runtime.ConfigContext) *runtime.Plan {
	var o options
	c.Decode(&o)
	s, ok := validate(c, &o)
	if !ok {
		return nil
	}
	dir := vfs.Clean(s.dir) // an s3:// URL keeps its scheme, a file:// URL is its local path
	s.dir = dir
	// Restored pending and in-progress part files are named relative to
	// the path, and the part names decide which files a restore re-commits
	// or deletes: a restore with other values would fail or duplicate.
	meaning := &runtime.StateMeaning{Values: map[string]string{"path": dir, "partPrefix": s.naming.Prefix, "partSuffix": s.naming.Suffix},
		Judge: func(name, was, now string) (bool, string) {
			return false, fmt.Sprintf("the snapshot's pending and in-progress part files are named relative to %s %q (a restore would fail or leave the output wrong)", name, was)
		}}
	// Formats csv and parquet can refuse a record (not a JSON object, or
	// not fitting the parquet columns), so only then does onError apply.
	return &runtime.Plan{NeedsCheckpointing: needsCheckpointing, OutputPaths: []string{dir}, State: meaning,
		OnError:     s.format == formatCSV || s.format == formatParquet,
		NewOperator: func() runtime.Operator { return &sink{set: s} }}
}

// validate checks every option, reporting each problem at its line.
func validate(c *runtime.ConfigContext, o *options) (*settings, bool) {
	s := &settings{dir: o.Path, bucket: defaultBucket, naming: naming{Prefix: "part", Suffix: o.PartSuffix},
		policy: defaultPolicy, format: formatLine, maxOpen: defaultMaxOpen}
	ok := true
	bad := func(field, format string, args ...any) {
		c.Errorf(field, format, args...)
		ok = false
	}
	if c.Has("path") && strings.TrimSpace(o.Path) == "" {
		bad("path", "must name the output directory")
	} else if o.Path != "" && !vfs.IsAbs(o.Path) {
		// Paths in a spec are not resolved against anything: the daemon
		// that writes them does not run in the directory of whoever
		// submitted the spec (paths on the command line are made
		// absolute by the CLI). An s3://bucket/prefix URL is absolute.
		bad("path", "%q is a relative path: write it absolute (the daemon writes the files and does not share your working directory), e.g. /tmp/%s", o.Path, filepath.Base(filepath.Clean(o.Path)))
	}
	if other := samePathSink(c, o); other != "" {
		bad("path", "operator %q writes part files to the same path with the same partPrefix: each would delete the other's files on restore; give one another path or partPrefix", other)
	}
	switch o.BucketTime {
	case "", "processing":
	case "event":
		s.eventTime = true
	default:
		bad("bucketTime", "must be processing or event, got %q", o.BucketTime)
	}
	s.loc = time.Local
	if o.Timezone != "" {
		loc, err := time.LoadLocation(o.Timezone)
		if err != nil {
			bad("timezone", "unknown time zone %q: use UTC, Local or an IANA name such as Europe/Berlin", o.Timezone)
		} else {
			s.loc = loc
		}
	}
	if o.Bucket != nil {
		s.bucket = *o.Bucket
	}
	if b, err := newBucketer(s.bucket, s.loc); err != nil {
		bad("bucket", "%v", err)
	} else {
		s.bucketKind = b.Kind
	}
	validateRolling(&o.Rolling, &s.policy, bad)
	if o.PartPrefix != nil {
		s.naming.Prefix = *o.PartPrefix
		if msg := checkNamePart(*o.PartPrefix, true); msg != "" {
			bad("partPrefix", "%s", msg)
		}
	}
	if msg := checkNamePart(o.PartSuffix, false); msg != "" {
		bad("partSuffix", "%s", msg)
	}
	switch o.Format {
	case "", "line":
	case "json":
		s.format = formatJSON
	case "csv":
		s.format = formatCSV
	case "parquet":
		s.format = formatParquet
	default:
		bad("format", "must be line, json, csv or parquet, got %q", o.Format)
	}
	s.csv = validateCSV(c, o, s.format == formatCSV, bad)
	validateParquet(c, o, s, bad)
	if o.MaxOpenFiles != nil {
		if *o.MaxOpenFiles < 1 {
			bad("maxOpenFiles", "must be at least 1, got %d", *o.MaxOpenFiles)
		}
		s.maxOpen = *o.MaxOpenFiles
	}
	return s, ok
}

func validateRolling(r *rolling, p *policy, bad func(string, string, ...any)) {
	if r.MaxPartSize != nil {
		if *r.MaxPartSize <= 0 {
			bad("rolling.maxPartSize", "must be more than 0 bytes")
		}
		p.MaxPartSize = int64(*r.MaxPartSize)
	}
	for _, d := range []struct {
		name string
		v    *api.Duration
		dst  *time.Duration
	}{{"rolloverInterval", r.RolloverInterval, &p.RolloverInterval}, {"inactivityInterval", r.InactivityInterval, &p.InactivityInterval}} {
		if d.v == nil {
			continue
		}
		if d.v.D() <= 0 {
			bad("rolling."+d.name, "must be more than 0, e.g. \"60s\"")
		}
		*d.dst = d.v.D()
	}
	p.OnCheckpoint = r.OnCheckpoint
}

// samePathSink returns the uid of another file sink of the job writing
// to the same path with the same prefix ("" if none).
func samePathSink(c *runtime.ConfigContext, o *options) string {
	if c.Job == nil || o.Path == "" {
		return ""
	}
	prefix := "part"
	if o.PartPrefix != nil {
		prefix = *o.PartPrefix
	}
	for i := range c.Job.Operators {
		op := &c.Job.Operators[i]
		if op == c.Op || op.Type != c.Op.Type {
			continue
		}
		p, _ := op.Options["path"].Value().(string)
		q, ok := op.Options["partPrefix"].Value().(string)
		if !ok {
			q = "part"
		}
		if p != "" && filepath.Clean(p) == filepath.Clean(o.Path) && q == prefix {
			return op.UID
		}
	}
	return ""
}

// checkNamePart returns what is wrong with a part file prefix or suffix.
func checkNamePart(s string, prefix bool) string {
	switch {
	case prefix && s == "":
		return "must not be empty"
	case strings.ContainsAny(s, "/\\\x00\n"):
		return "must not contain '/', '\\', NUL or newlines: it is part of a file name"
	case prefix && strings.HasPrefix(s, "."):
		return "must not start with '.' (finished files would be hidden)"
	case strings.Contains(s, inProgressMarker):
		return "must not contain " + inProgressMarker
	case len(s) > 100:
		return "is too long (at most 100 bytes)"
	}
	return ""
}

// validateParquet checks the parquet options (columns, compression) and
// builds the format. A bulk format rolls every part at every checkpoint
// (parquet.go explains why), whatever rolling.onCheckpoint says.
func validateParquet(c *runtime.ConfigContext, o *options, s *settings, bad func(string, string, ...any)) {
	if s.format != formatParquet {
		if c.Has("columns") && s.format != formatCSV {
			bad("columns", "applies to formats csv and parquet only (format is %s)", s.format)
		}
		if c.Has("compression") {
			bad("compression", "applies to format parquet only (format is %s)", s.format)
		}
		return
	}
	s.policy.OnCheckpoint = true
	codec := compress.Codec(&parquet.Snappy)
	if o.Compression != "" {
		var ok bool
		if codec, ok = codecs[strings.ToLower(o.Compression)]; !ok {
			bad("compression", "must be snappy, zstd, gzip or none, got %q", o.Compression)
		}
	}
	var cols []column
	switch {
	case c.Has("columns"):
		specs, ok := parquetColumns(c, o.Columns, bad)
		if !ok {
			return
		}
		if len(specs) == 0 {
			bad("columns", "must list at least one column: {name: id, type: int64}")
			return
		}
		seen := map[string]int{}
		for i, spec := range specs {
			field := fmt.Sprintf("columns[%d]", i)
			good := true
			if msg := checkColumnName(spec.Name); msg != "" {
				bad(field+".name", "%s", msg)
				good = false
			} else if j, dup := seen[spec.Name]; dup {
				bad(field+".name", "column %q is declared twice (also columns[%d])", spec.Name, j)
				good = false
			}
			seen[spec.Name] = i
			kind, msg := parseColumnType(spec.Type)
			if msg != "" && !c.Reported(field+".type") {
				bad(field+".type", "%s", msg)
				good = false
			}
			if good {
				cols = append(cols, column{name: spec.Name, kind: kind, nullable: spec.Nullable})
			}
		}
		if len(cols) != len(specs) {
			return
		}
	case c.Schema != nil && len(c.Schema.Fields) > 0:
		for _, name := range c.Schema.Names() {
			if msg := checkColumnName(name); msg != "" {
				bad("format", "field %q of source %q's schema cannot be a Parquet column: it %s; declare columns: on the sink", name, c.Schema.Source, msg)
				return
			}
		}
		cols = columnsFromSchema(c.Schema)
	default:
		bad("format", "parquet needs the records' columns: declare them on the sink (columns: [{name: id, type: int64}, {name: user, type: string, nullable: true}]) "+
			"or give the source a schema: that reaches this sink (through filter or keyBy only)")
		return
	}
	s.bulk = newBulkFormat(cols, codec)
}

// parquetColumns decodes columns: for format parquet, a list of
// {name, type, nullable}; a bare name (csv's form) lacks the type.
func parquetColumns(c *runtime.ConfigContext, n api.Node, bad func(string, string, ...any)) ([]columnSpec, bool) {
	list, isList := n.Value().([]any)
	if !isList {
		bad("columns", "format parquet needs a list of columns, each {name: id, type: int64} (types: %s)", columnTypeList)
		return nil, false
	}
	ok := true
	for i, v := range list {
		if _, isMap := v.(map[string]any); !isMap {
			bad(fmt.Sprintf("columns[%d]", i), "format parquet needs each column's name and type: {name: %v, type: int64} (types: %s)", v, columnTypeList)
			ok = false
		}
	}
	if !ok {
		return nil, false
	}
	var specs []columnSpec
	before := len(c.Dec.Errors.Errors)
	c.Dec.Decode(n, c.Path+".columns", &specs)
	return specs, len(c.Dec.Errors.Errors) == before
}

// validateCSV checks the options of format csv (refused with the others).
func validateCSV(c *runtime.ConfigContext, o *options, csv bool, bad func(string, string, ...any)) csvOptions {
	out := csvOptions{delim: ',', header: true}
	if !csv {
		for _, f := range []string{"delimiter", "header"} {
			if c.Has(f) {
				bad(f, "applies to format csv only")
			}
		}
		return out
	}
	if !o.Columns.IsZero() {
		c.Dec.Decode(o.Columns, c.Path+".columns", &out.columns)
	}
	if len(out.columns) == 0 {
		bad("columns", "format csv needs the columns to write, in order: the names of the records' JSON members, e.g. columns: [id, name, ts]")
	}
	seen := map[string]bool{}
	for _, col := range out.columns {
		switch {
		case col == "":
			bad("columns", "a column name must not be empty")
		case seen[col]:
			bad("columns", "column %q is listed twice", col)
		}
		seen[col] = true
	}
	if o.Delimiter != nil {
		d := *o.Delimiter
		if len(d) != 1 || d[0] == '"' || d[0] == '\r' || d[0] == '\n' || d[0] >= 0x80 {
			bad("delimiter", "must be one ASCII character other than a quote or a newline, e.g. \",\", \";\" or \"\\t\", got %q", d)
		} else {
			out.delim = d[0]
		}
	}
	if o.Header != nil {
		out.header = *o.Header
	}
	return out
}
