package postgrescdc

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// sourceOptions are the YAML options of the postgres-cdc source.
type sourceOptions struct {
	URL         string   `yaml:"url,required"`    // postgres://user@host:port/db
	Tables      []string `yaml:"tables,required"` // [schema.]table, as in the catalog
	Slot        string   `yaml:"slot"`            // default flinkgo_<uid>
	Publication string   `yaml:"publication"`     // default: the slot's name
	Snapshot    string   `yaml:"snapshot"`        // initial (default), never
}

// tableName is a table as written in tables: (schema public when left out).
type tableName struct{ schema, name string }

func (t tableName) String() string { return t.schema + "." + t.name }

// sql is the table's quoted name, for statements.
func (t tableName) sql() string {
	return quoteIdent(t.schema) + "." + quoteIdent(t.name)
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// config is the checked form of sourceOptions.
type config struct {
	uid         string
	url         string
	tables      []tableName
	slot        string
	publication string
	snapshot    bool // snapshot: initial
}

// slotName: what PostgreSQL accepts as a replication slot's name.
var slotName = regexp.MustCompile(`^[a-z0-9_]{1,63}$`)

// identName: a table or schema name the source accepts (unquoted in the
// spec; matched exactly against the catalog, where unquoted names are
// lower case).
var identName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_$]{0,62}$`)

func configure(c *runtime.ConfigContext) *runtime.Plan {
	var o sourceOptions
	c.Decode(&o)
	bad := false
	errorf := func(field, format string, args ...any) {
		c.Errorf(field, format, args...)
		bad = true
	}
	cfg := &config{uid: c.Op.UID, url: o.URL, slot: o.Slot, publication: o.Publication, snapshot: true}
	if c.Has("url") {
		if _, err := pgconn.ParseConfig(o.URL); err != nil || strings.TrimSpace(o.URL) == "" {
			errorf("url", "not a PostgreSQL connection URL (postgres://user:password@host:5432/database): %v", err)
		}
	}
	if c.Has("tables") && len(o.Tables) == 0 && !c.Reported("tables") {
		errorf("tables", "list at least one table ([schema.]table, e.g. [public.orders])")
	}
	seen := map[tableName]bool{}
	for i, t := range o.Tables {
		schema, name, ok := strings.Cut(t, ".")
		if !ok {
			schema, name = "public", t
		}
		tn := tableName{schema, name}
		switch {
		case !identName.MatchString(schema) || !identName.MatchString(name):
			errorf(fmt.Sprintf("tables[%d]", i), "%q is not [schema.]table (letters, digits and _; as in the catalog: lower case unless the table was created with a quoted name)", t)
		case seen[tn]:
			errorf(fmt.Sprintf("tables[%d]", i), "table %s is listed twice", tn)
		}
		seen[tn] = true
		cfg.tables = append(cfg.tables, tn)
	}
	if cfg.slot == "" {
		cfg.slot = defaultSlot(c.Op.UID)
	} else if !slotName.MatchString(cfg.slot) {
		errorf("slot", "%q is not a replication slot name: lower-case letters, digits and _ only, at most 63", cfg.slot)
	}
	if cfg.publication == "" {
		cfg.publication = cfg.slot
	} else if !identName.MatchString(cfg.publication) {
		errorf("publication", "%q is not a publication name (letters, digits and _)", cfg.publication)
	}
	switch o.Snapshot {
	case "", "initial":
	case "never":
		cfg.snapshot = false
	default:
		errorf("snapshot", "must be initial (read the tables first, consistent with the slot) or never (only changes from the slot's position), got %q", o.Snapshot)
	}
	if c.Op.Parallelism > 1 {
		errorf("parallelism", "a replication slot is one ordered stream with one position, so postgres-cdc runs as one subtask: set parallelism: 1 on this operator (the operators after it may keep parallelism %d)", c.Op.Parallelism)
	}
	if bad {
		return nil
	}
	return &runtime.Plan{
		NeedsCheckpointing: "postgres-cdc keeps the slot's position in checkpoints and confirms it to PostgreSQL only when a checkpoint completes " +
			"(without checkpoints the server would keep all WAL for ever); enable checkpointing (checkpointing: {interval: 10s})",
		NewSource: func() runtime.Source { return &source{cfg: cfg} },
	}
}

// defaultSlot derives a slot name from the operator's uid.
func defaultSlot(uid string) string {
	var b strings.Builder
	b.WriteString("flinkgo_")
	for _, r := range strings.ToLower(uid) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	s := b.String()
	if len(s) > 63 {
		s = s[:63]
	}
	return s
}
