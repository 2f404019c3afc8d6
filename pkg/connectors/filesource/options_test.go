package filesource

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/engine"
)

func TestOptionsErrorsAtTheirLines(t *testing.T) {
	_, err := engine.Compile(testRegistry, "job.yaml", []byte(`name: bad
operators:
  - uid: in
    type: file
    path: data/in
    format: xml
    monitor: 0s
    onDecodeError: ignore
    delimiter: ";"
  - uid: csv
    type: file
    path: /data/in.csv
    format: csv
    delimiter: "::"
    header: false
    columns: [a, a, ""]
  - {uid: out, type: test-collect, from: [in, csv], name: x}
`), engine.Defaults{})
	require.Error(t, err)
	msg := err.Error()
	t.Log(msg)
	for _, want := range []string{
		`job.yaml:5:11: operators[0].path: "data/in" is a relative path: write it absolute`,
		`job.yaml:6:13: operators[0].format: must be lines, json, csv or parquet, got "xml"`,
		`job.yaml:7:14: operators[0].monitor: must be more than 0`,
		`job.yaml:8:20: operators[0].onDecodeError: must be fail or skip, got "ignore"`,
		`job.yaml:9:16: operators[0].delimiter: applies to format csv only`,
		`job.yaml:14:16: operators[1].delimiter: must be one ASCII character`,
		`job.yaml:16:14: operators[1].columns: column "a" is listed twice`,
		`job.yaml:16:14: operators[1].columns: a column name must not be empty`,
	} {
		require.Contains(t, msg, want)
	}

	_, err = engine.Compile(testRegistry, "job.yaml", []byte(`name: nocols
operators:
  - {uid: in, type: file, path: /d, format: csv, header: false}
  - {uid: out, type: test-collect, from: [in], name: x}
`), engine.Defaults{})
	require.ErrorContains(t, err, "job.yaml:3:")
	require.ErrorContains(t, err, "header: false needs the columns' names")

	_, err = engine.Compile(testRegistry, "job.yaml", []byte(`name: nopath
operators:
  - {uid: in, type: file}
  - {uid: out, type: test-collect, from: [in], name: x}
`), engine.Defaults{})
	require.ErrorContains(t, err, `missing required field "path"`)
}

// The file sink's csv options are checked where they are written.
func TestSinkCSVOptionsErrorsAtTheirLines(t *testing.T) {
	_, err := engine.Compile(testRegistry, "job.yaml", []byte(`name: bad
operators:
  - {uid: in, type: file, path: /d}
  - uid: out
    type: file
    from: [in]
    path: /out
    format: csv
    delimiter: '"'
  - uid: out2
    type: file
    from: [in]
    path: /out2
    columns: [a]
`), engine.Defaults{})
	require.Error(t, err)
	msg := err.Error()
	t.Log(msg)
	for _, want := range []string{
		"job.yaml:4:",
		"operators[1].columns: format csv needs the columns to write",
		`job.yaml:9:16: operators[1].delimiter: must be one ASCII character other than a quote`,
		`job.yaml:14:14: operators[2].columns: applies to formats csv and parquet only`,
	} {
		require.Contains(t, msg, want)
	}
}
