package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/runtime/expr"
)

// tableColumn is a column of the target table as the catalog has it.
type tableColumn struct {
	name     string
	oid      uint32
	typ      string // for messages
	writable bool   // not generated, not an identity or serial column
}

// describeTable reads the table's columns, refusing a table that does not
// exist (naming it and the database) or that the user may not write.
func describeTable(ctx context.Context, conn *pgx.Conn, cfg *config) (oid uint32, cols []tableColumn, err error) {
	var regclass *uint32
	if err := conn.QueryRow(ctx, "SELECT to_regclass($1)::oid", cfg.qualified()).Scan(&regclass); err != nil {
		return 0, nil, fmt.Errorf("look up table %s: %w", cfg.display(), err)
	}
	if regclass == nil {
		var path string
		_ = conn.QueryRow(ctx, "SHOW search_path").Scan(&path)
		return 0, nil, runtime.SuppressRestarts(fmt.Errorf("postgres sink: table %s does not exist in database %s (search_path %s): create it before starting the job (the sink does not create tables)",
			cfg.display(), cfg.where, path))
	}
	oid = *regclass
	rows, err := conn.Query(ctx, `
SELECT a.attname, a.atttypid, format_type(a.atttypid, a.atttypmod),
       a.attgenerated = '' AND a.attidentity = '' AND coalesce(pg_get_expr(d.adbin, d.adrelid) NOT LIKE 'nextval(%', true)
FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`, oid)
	if err != nil {
		return 0, nil, fmt.Errorf("read the columns of %s: %w", cfg.display(), err)
	}
	for rows.Next() {
		var c tableColumn
		if err := rows.Scan(&c.name, &c.oid, &c.typ, &c.writable); err != nil {
			rows.Close()
			return 0, nil, err
		}
		cols = append(cols, c)
	}
	if err := rows.Err(); err != nil {
		return 0, nil, fmt.Errorf("read the columns of %s: %w", cfg.display(), err)
	}
	privs := "INSERT"
	if cfg.upsert {
		privs = "INSERT, UPDATE"
	}
	var allowed bool
	if err := conn.QueryRow(ctx, "SELECT has_table_privilege($1::oid, $2)", oid, privs).Scan(&allowed); err != nil {
		return 0, nil, fmt.Errorf("check privileges on %s: %w", cfg.display(), err)
	}
	if !allowed {
		var user string
		_ = conn.QueryRow(ctx, "SELECT current_user").Scan(&user)
		return 0, nil, runtime.SuppressRestarts(fmt.Errorf("postgres sink: user %s may not write table %s: GRANT %s ON %s TO %s", user, cfg.display(), privs, cfg.qualified(), user))
	}
	return oid, cols, nil
}

// checkUniqueKey refuses a primaryKey that is not the column set of a
// unique index of the table (the ON CONFLICT target must be one; Postgres
// itself only says so when the first upsert runs).
func checkUniqueKey(ctx context.Context, conn *pgx.Conn, cfg *config, oid uint32) error {
	key := slices.Sorted(slices.Values(cfg.primaryKey))
	var n int
	err := conn.QueryRow(ctx, `
SELECT count(*) FROM pg_index i
WHERE i.indrelid = $1 AND i.indisunique AND i.indpred IS NULL AND i.indexprs IS NULL
  AND (SELECT array_agg(a.attname::text ORDER BY a.attname::text) FROM pg_attribute a
       WHERE a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)) = $2::text[]`, oid, key).Scan(&n)
	if err != nil {
		return fmt.Errorf("read the unique keys of %s: %w", cfg.display(), err)
	}
	if n == 0 {
		return runtime.SuppressRestarts(fmt.Errorf("postgres sink: mode: upsert needs a primary key or unique constraint of %s on exactly primaryKey (%s), the ON CONFLICT target; it has none: ALTER TABLE %s ADD PRIMARY KEY (%s), or fix primaryKey",
			cfg.display(), strings.Join(cfg.primaryKey, ", "), cfg.qualified(), strings.Join(cfg.primaryKey, ", ")))
	}
	return nil
}

// plainName: a column name the expression language reads as the JSON
// member of that name (expressions reserve key, value and timestamp).
var plainName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// resolveColumns matches the configured columns with the table's, or,
// without columns, picks every writable column, read from the JSON member
// of its name. It returns the columns written, in order, with their
// expressions compiled (one Multi per subtask).
func resolveColumns(cfg *config, table []tableColumn) ([]tableColumn, *expr.Multi, error) {
	byName := map[string]tableColumn{}
	var names []string
	for _, c := range table {
		byName[c.name] = c
		names = append(names, c.name)
	}
	var out []tableColumn
	var progs []*expr.Program
	if cfg.columns != nil {
		for _, c := range cfg.columns {
			tc, ok := byName[c.name]
			if !ok {
				return nil, nil, runtime.SuppressRestarts(fmt.Errorf("postgres sink: table %s has no column %q (its columns: %s): add it (ALTER TABLE %s ADD COLUMN …) or fix columns",
					cfg.display(), c.name, strings.Join(names, ", "), cfg.qualified()))
			}
			out = append(out, tc)
			progs = append(progs, c.expr.Clone())
		}
	} else {
		for _, c := range table {
			if !c.writable {
				continue
			}
			if !plainName.MatchString(c.name) || c.name == expr.VarKey || c.name == expr.VarValue || c.name == expr.VarTimestamp {
				return nil, nil, runtime.SuppressRestarts(fmt.Errorf("postgres sink: column %q of %s cannot be read from the JSON member of its name (expressions reserve key, value and timestamp, and read plain identifiers only): list the columns with their expressions, e.g. columns: {%s: <expression>}",
					c.name, cfg.display(), c.name))
			}
			p, err := expr.Compile(c.name, expr.Any)
			if err != nil {
				return nil, nil, fmt.Errorf("column %q: %w", c.name, err)
			}
			out = append(out, c)
			progs = append(progs, p)
		}
		if len(out) == 0 {
			return nil, nil, runtime.SuppressRestarts(fmt.Errorf("postgres sink: table %s has no column the sink can write (generated, identity and serial columns are left to Postgres)", cfg.display()))
		}
	}
	for _, k := range cfg.primaryKey {
		if _, ok := byName[k]; !ok {
			return nil, nil, runtime.SuppressRestarts(fmt.Errorf("postgres sink: primaryKey column %q is not a column of %s (its columns: %s)", k, cfg.display(), strings.Join(names, ", ")))
		}
		found := false
		for _, c := range out {
			found = found || c.name == k
		}
		if !found {
			return nil, nil, runtime.SuppressRestarts(fmt.Errorf("postgres sink: primaryKey column %q is not written (generated, identity or serial): the upsert needs its value; list it in columns", k))
		}
	}
	return out, expr.NewMulti(progs...), nil
}

// Type OIDs converted by the sink (pgtype's constants).
const (
	oidBool        = pgtype.BoolOID
	oidInt2        = pgtype.Int2OID
	oidInt4        = pgtype.Int4OID
	oidInt8        = pgtype.Int8OID
	oidFloat4      = pgtype.Float4OID
	oidFloat8      = pgtype.Float8OID
	oidText        = pgtype.TextOID
	oidVarchar     = pgtype.VarcharOID
	oidBPChar      = pgtype.BPCharOID
	oidName        = pgtype.NameOID
	oidJSON        = pgtype.JSONOID
	oidJSONB       = pgtype.JSONBOID
	oidTimestamp   = pgtype.TimestampOID
	oidTimestamptz = pgtype.TimestamptzOID
	oidDate        = pgtype.DateOID
)

// converter turns an expression's result (nil, bool, int, int64,
// float64, string, or a JSON object or array) into a value pgx encodes
// in binary for a column of type oid (COPY and the extended protocol
// both send binary). A string for another type is parsed as Postgres's
// text form of it (a timestamp, a uuid, a numeric); a number for a
// timestamp or date is milliseconds since the epoch.
type converter func(v any) (any, error)

func converterFor(m *pgtype.Map, oid uint32) converter {
	switch oid {
	case oidInt2, oidInt4, oidInt8:
		return toInt
	case oidFloat4, oidFloat8:
		return toFloat
	case oidText, oidVarchar, oidBPChar, oidName:
		return toText
	case oidJSON, oidJSONB:
		return toJSON
	}
	fromText := func(s string) (any, error) {
		var out any
		if err := m.Scan(oid, pgtype.TextFormatCode, []byte(s), &out); err != nil {
			return nil, err
		}
		return out, nil
	}
	millis := oid == oidTimestamp || oid == oidTimestamptz || oid == oidDate
	return func(v any) (any, error) {
		switch x := v.(type) {
		case string:
			return fromText(x)
		case int, int64, float64:
			if millis {
				ms, err := expr.Millis(x)
				if err != nil {
					return nil, err
				}
				return time.UnixMilli(ms).UTC(), nil
			}
			if oid == oidBool {
				return nil, fmt.Errorf("%v is not true or false", x)
			}
			return x, nil
		case map[string]any, []any:
			b, err := json.Marshal(x)
			if err != nil {
				return nil, err
			}
			return fromText(string(b))
		}
		return v, nil
	}
}

func toInt(v any) (any, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case int:
		return int64(x), nil
	case int64:
		return x, nil
	case float64:
		if x != math.Trunc(x) || math.Abs(x) > 1<<63 {
			return nil, fmt.Errorf("%v is not an integer", x)
		}
		return int64(x), nil
	case string:
		return strconv.ParseInt(strings.TrimSpace(x), 10, 64)
	}
	return nil, fmt.Errorf("%s is not an integer", shown(v))
}

func toFloat(v any) (any, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case int:
		return float64(x), nil
	case int64:
		return float64(x), nil
	case float64:
		return x, nil
	case string:
		return strconv.ParseFloat(strings.TrimSpace(x), 64)
	}
	return nil, fmt.Errorf("%s is not a number", shown(v))
}

func toText(v any) (any, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case string:
		return x, nil
	}
	b, err := json.Marshal(v)
	return string(b), err
}

// toJSON: a string is JSON text already (the record's value, or a
// member holding a serialized document); anything else is encoded.
func toJSON(v any) (any, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case string:
		if !json.Valid([]byte(x)) {
			return nil, fmt.Errorf("%s is no JSON text (a string for a json column is taken as JSON: to store a JSON string, quote it)", shown(x))
		}
		return json.RawMessage(x), nil
	}
	b, err := json.Marshal(v)
	return json.RawMessage(b), err
}

func shown(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 60 {
		b = append(b[:60], "…"...)
	}
	return string(b)
}

// SQLSTATEs the sink acts on.
const (
	codeUndefinedObject      = "42704" // COMMIT/ROLLBACK PREPARED of an unknown gid
	codeSerializationFailure = "40001"
	codeDeadlock             = "40P01"
	codeInsufficientPriv     = "42501"
	codeDuplicateTable       = "42P07"
	codeUniqueViolation      = "23505"
)

// sqlState is err's SQLSTATE, "" when it is no server error.
func sqlState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}
