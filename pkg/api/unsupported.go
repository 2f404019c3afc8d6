package api

import (
	"fmt"
	"strings"
)

// unsupportedDoc is the page that says, for what flinkgo does not do, what
// to use today and whether something is planned. Unknown-type errors point
// at it.
const unsupportedDoc = "docs/unsupported.md"

// unsupported holds operator types users ask for that flinkgo has not got,
// by normalized name (see unsupportedKey), with the way forward in a few
// words. docs/unsupported.md holds the same rows with more words
// (TestUnsupportedTypesAreDocumented keeps the two in step).
var unsupported = map[string]string{
	"csv":       "CSV is a format, not a type: read CSV files with type file, format csv (docs/file-source.md); the file sink writes format csv too",
	"http":      "there is no HTTP source; send the requests to a Kafka topic or a NATS subject and read that, or write a source in Go (docs/public-api.md)",
	"parquet":   "Parquet is a format, not a type: type file with format parquet writes it (the file sink) and reads it (the file source): docs/formats.md",
	"jdbc":      "there is no JDBC connector; for PostgreSQL use type postgres (docs/postgres.md), for other databases write a sink in Go (docs/public-api.md)",
	"postgres":  "the PostgreSQL sink is type postgres (docs/postgres.md); a Postgres source (CDC) is not built yet",
	"sql":       "SQL is not an operator type: write the job as a Flink SQL script, job.sql, and run it with flinkgo run job.sql (docs/sql.md); or write it as operators (map, filter, keyBy, window, reduce, joins)",
	"lookup":    "there is no lookup join; read the table's changes as a stream and join them with a keyed process function in Go (docs/public-api.md)",
	"topn":      "there is no top-N operator; today a keyed process function in Go (docs/public-api.md)",
	"cep":       "there is no CEP (pattern matching); today a keyed process function with state and timers in Go (docs/public-api.md)",
	"s3":        "S3 is not an operator type: use type file with path s3://bucket/prefix (docs/object-storage.md)",
	"rocksdb":   "RocksDB is a state backend, not an operator type; a state backend on disk is planned",
	"aggregate": "aggregates are options of type window (count, sum, min, max, avg) or type reduce",
	"process":   "process functions are written in Go and registered in your own binary (docs/public-api.md)",
	"flatmap":   "there is no flatMap; a map emits one record per input; write an operator in Go for more (docs/public-api.md)",
	"union":     "there is no union type: give the next operator several inputs, from: [a, b]",
}

// unsupportedKey normalizes a type name for the table: case, '-', '_' and
// a Source/Sink/Input/Output suffix do not matter ("top-N", "csvSource").
func unsupportedKey(typ string) string {
	k := strings.ToLower(strings.NewReplacer("-", "", "_", "", " ", "").Replace(typ))
	for _, suffix := range []string{"source", "sink", "input", "output", "join"} {
		if trimmed := strings.TrimSuffix(k, suffix); trimmed != "" {
			k = trimmed
		}
	}
	switch k {
	case "postgresql", "pg":
		return "postgres"
	case "flinksql":
		return "sql"
	}
	return k
}

// unknownTypeMessage is the error for an operator type that no definition
// has: the way forward when the type is one users ask for, else the
// nearest known type, else the known types; both of the latter point at
// unsupportedDoc.
func unknownTypeMessage(typ string, known []string) string {
	msg := fmt.Sprintf("unknown operator type %q", typ)
	if way, ok := unsupported[unsupportedKey(typ)]; ok {
		return msg + ": " + way + "; see " + unsupportedDoc
	}
	if c := closest(typ, known); c != "" {
		return msg + fmt.Sprintf("; did you mean %q?", c)
	}
	return msg + " (known types: " + strings.Join(known, ", ") + "); for what flinkgo does not do yet and what to use instead, see " + unsupportedDoc
}
