package postgres

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/runtime/expr"
)

// Defaults of the sink's options.
const (
	// defaultBatchSize is how many rows the sink buffers before it sends
	// them (one COPY, or one pipelined batch of upserts).
	defaultBatchSize = 5000
	// defaultLockTimeout bounds how long a statement waits for a row lock
	// (Postgres's lock_timeout on the sink's sessions): a prepared
	// transaction keeps its locks until it commits, and a write of the
	// next checkpoint that waited for one would wait forever, since the
	// commit runs on the same subtask. With the timeout it fails the job
	// over with Postgres's reason instead.
	defaultLockTimeout = 30 * time.Second
	// maxPrefix keeps a gid (prefix-subtask-checkpoint) within Postgres's
	// 200 bytes.
	maxPrefix = 150
)

// options are the YAML options of the postgres sink.
type options struct {
	URL               string           `yaml:"url,required"`
	Table             string           `yaml:"table,required"`
	Columns           api.NamedStrings `yaml:"columns"` // column → expression; default: the JSON member of each column's name
	Mode              string           `yaml:"mode"`    // append (default), upsert
	PrimaryKey        any              `yaml:"primaryKey"`
	DeliveryGuarantee string           `yaml:"deliveryGuarantee"` // exactly-once (default), at-least-once
	TransactionPrefix string           `yaml:"transactionPrefix"`
	BatchSize         *int             `yaml:"batchSize"`
	LockTimeout       *api.Duration    `yaml:"lockTimeout"`
}

// column is a configured column: its name and the expression giving its
// value (nil: the JSON member of the same name).
type column struct {
	name string
	expr *expr.Program
}

// config is the checked form of options, shared read-only by the
// subtasks (each clones the expressions).
type config struct {
	url         string
	where       string // the server and database, for messages (no password)
	schema      string // "" : the search path's
	table       string
	columns     []column // nil: every writable column of the table, by name
	upsert      bool
	primaryKey  []string
	twoPhase    bool // append with exactly-once: PREPARE TRANSACTION at barriers
	prefix      string
	batchSize   int
	lockTimeout time.Duration
}

// qualified is the table's name as SQL, quoted.
func (c *config) qualified() string {
	if c.schema == "" {
		return pgx.Identifier{c.table}.Sanitize()
	}
	return pgx.Identifier{c.schema, c.table}.Sanitize()
}

// display is the table's name for messages.
func (c *config) display() string {
	if c.schema == "" {
		return c.table
	}
	return c.schema + "." + c.table
}

const needsCheckpointing = "the postgres sink writes its rows in a transaction per checkpoint (exactly-once: prepared at the barrier, committed when the checkpoint completes; at-least-once: committed at the barrier): without checkpointing an unbounded job would never commit them"

// Definitions returns the operator types of this package, for a
// runtime.Registry.
func Definitions() []runtime.Definition {
	return []runtime.Definition{
		{Type: "postgres", Kind: api.KindSink,
			Doc: "PostgreSQL table sink, exactly-once (a prepared transaction per checkpoint, committed when it completes) or at-least-once: " +
				"url, table, columns, mode (append|upsert), primaryKey, deliveryGuarantee, transactionPrefix, batchSize, lockTimeout",
			Configure: configure},
	}
}

var prefixChars = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

func configure(c *runtime.ConfigContext) *runtime.Plan {
	var o options
	c.Decode(&o)
	cfg := &config{url: o.URL, batchSize: defaultBatchSize, lockTimeout: defaultLockTimeout, prefix: o.TransactionPrefix}
	ok := true
	bad := func(field, format string, args ...any) {
		c.Errorf(field, format, args...)
		ok = false
	}
	if c.Has("url") {
		pc, err := pgx.ParseConfig(o.URL)
		if err != nil {
			bad("url", "not a PostgreSQL connection string (%v); e.g. postgres://user:password@localhost:5432/db?sslmode=disable", err)
		} else {
			cfg.where = fmt.Sprintf("%s:%d/%s", pc.Host, pc.Port, pc.Database)
		}
	}
	if c.Has("table") {
		parts := strings.Split(o.Table, ".")
		switch {
		case len(parts) == 1 && parts[0] != "":
			cfg.table = parts[0]
		case len(parts) == 2 && parts[0] != "" && parts[1] != "":
			cfg.schema, cfg.table = parts[0], parts[1]
		default:
			bad("table", "must be a table name or schema.table, got %q", o.Table)
		}
	}
	seen := map[string]bool{}
	for _, col := range o.Columns {
		if col.Name == "" {
			c.Dec.ErrorAt(col.Path, "a column needs a name")
			ok = false
			continue
		}
		if seen[col.Name] {
			c.Dec.ErrorAt(col.Path, "column %q is listed twice", col.Name)
			ok = false
		}
		seen[col.Name] = true
		src := col.Value
		if strings.TrimSpace(src) == "" {
			src = col.Name
		}
		p, err := expr.CompileWith(c.Schema, src, expr.Any)
		if err != nil {
			c.Dec.ErrorAt(col.Path, "%s: %v", src, err)
			ok = false
			continue
		}
		cfg.columns = append(cfg.columns, column{name: col.Name, expr: p})
	}
	if c.Has("columns") && len(o.Columns) == 0 && !c.Reported("columns") {
		bad("columns", "needs at least one column: expression, e.g. {id: idx, name: user}; omit it to write every column from the JSON member of its name")
	}
	switch o.Mode {
	case "", "append":
	case "upsert":
		cfg.upsert = true
	default:
		bad("mode", "must be append or upsert, got %q", o.Mode)
	}
	cfg.primaryKey = primaryKey(c, o.PrimaryKey, bad)
	switch {
	case cfg.upsert && len(cfg.primaryKey) == 0 && !c.Reported("primaryKey"):
		bad("primaryKey", "mode: upsert needs primaryKey: the columns of a unique constraint or primary key of the table (INSERT … ON CONFLICT (primaryKey) DO UPDATE)")
	case !cfg.upsert && c.Has("primaryKey"):
		bad("primaryKey", "applies only with mode: upsert")
	}
	if cfg.upsert && cfg.columns != nil {
		for _, k := range cfg.primaryKey {
			if !seen[k] {
				bad("primaryKey", "column %q is not one of columns (%s): the upsert needs its value", k, strings.Join(columnNames(cfg.columns), ", "))
			}
		}
	}
	exactlyOnce := true
	switch o.DeliveryGuarantee {
	case "", "exactly-once":
	case "at-least-once":
		exactlyOnce = false
	default:
		bad("deliveryGuarantee", "must be exactly-once or at-least-once, got %q", o.DeliveryGuarantee)
	}
	// Upserts are exactly-once by idempotence, not by a prepared
	// transaction (see doc.go): a prepared transaction keeps its row
	// locks until its checkpoint completes, so the next checkpoint's
	// upsert of the same key would wait for a commit that only the same
	// subtask can run.
	cfg.twoPhase = exactlyOnce && !cfg.upsert
	if c.Has("transactionPrefix") {
		switch {
		case !cfg.twoPhase:
			bad("transactionPrefix", "applies only with mode: append and deliveryGuarantee: exactly-once (prepared transactions)")
		case !prefixChars.MatchString(o.TransactionPrefix):
			bad("transactionPrefix", "must be letters, digits, '.', '_' or '-', got %q", o.TransactionPrefix)
		case len(o.TransactionPrefix) > maxPrefix:
			bad("transactionPrefix", "is %d characters; at most %d (a prepared transaction's name is at most 200 bytes)", len(o.TransactionPrefix), maxPrefix)
		}
	}
	if o.BatchSize != nil {
		if cfg.batchSize = *o.BatchSize; cfg.batchSize < 1 || cfg.batchSize > 1_000_000 {
			bad("batchSize", "must be 1 to 1000000 rows, got %d", cfg.batchSize)
		}
	}
	if o.LockTimeout != nil {
		if cfg.lockTimeout = o.LockTimeout.D(); cfg.lockTimeout < time.Millisecond {
			bad("lockTimeout", "must be at least 1ms, got %s", cfg.lockTimeout)
		}
	}
	if exactlyOnce && c.Checkpointing.Enabled() && c.Checkpointing.Mode != api.ExactlyOnce {
		bad("deliveryGuarantee", "exactly-once needs checkpointing.mode: %s (with %s, rows after a barrier can enter the transaction of the checkpoint before it and be written twice after a restore)", api.ExactlyOnce, c.Checkpointing.Mode)
	}
	if !ok {
		return nil
	}
	// The snapshot names prepared transactions by their prefix and the
	// table they write: a restore under another table would commit them
	// into the old one and then write the replayed rows into the new one.
	meaning := &runtime.StateMeaning{Values: map[string]string{"table": cfg.display(), "database": cfg.where},
		Judge: func(name, was, now string) (bool, string) {
			return false, fmt.Sprintf("the snapshot's prepared transactions write into %s %q: the restore commits them there and writes the rows after them into %q (split output); restore with the old value, or start the job without the snapshot", name, was, now)
		}}
	if !cfg.twoPhase {
		meaning = nil // nothing pending: the state holds no transaction
	}
	return &runtime.Plan{NeedsCheckpointing: needsCheckpointing, State: meaning, InputValues: runtime.ValuesDropped,
		NewOperator: func() runtime.Operator { return newSink(cfg) }}
}

// primaryKey reads a column name or a list of them.
func primaryKey(c *runtime.ConfigContext, v any, bad func(field, format string, args ...any)) []string {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		if x == "" {
			bad("primaryKey", "empty column name")
			return nil
		}
		return []string{x}
	case []any:
		var out []string
		for i, e := range x {
			s, isStr := e.(string)
			if !isStr || s == "" {
				bad(fmt.Sprintf("primaryKey[%d]", i), "must be a column name, got %v", e)
				continue
			}
			out = append(out, s)
		}
		if len(x) == 0 {
			bad("primaryKey", "needs at least one column")
		}
		return out
	}
	bad("primaryKey", "must be a column name or a list of them, got %v", v)
	return nil
}

func columnNames(cols []column) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.name
	}
	return out
}
