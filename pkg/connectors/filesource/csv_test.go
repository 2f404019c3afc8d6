package filesource

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/runtimetest"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// JSON records → the file sink's csv → the file source's csv: the same
// records, types included, with quotes, delimiters, CR, LF and unicode in
// the values; strings that look like numbers stay strings.
func TestCSVRoundTripThroughSinkAndSource(t *testing.T) {
	t.Parallel()
	in, mid := t.TempDir(), t.TempDir()
	values := []string{`plain`, `a,b`, `say "hi"`, "two\nlines", "cr\r\nlf", `""`, ``, `42`, `true`, `null`, `é ✓`, ` padded `, `;`}
	var lines, want []string
	for i := range 200 {
		s := values[i%len(values)]
		rec := map[string]any{"id": i, "s": s, "n": float64(i) / 4, "b": i%2 == 0}
		if i%5 == 0 {
			rec["n"] = nil
		}
		line, err := json.Marshal(rec)
		require.NoError(t, err)
		lines = append(lines, string(line))
		w, err := json.Marshal(map[string]any{"id": i, "s": s, "n": rec["n"], "b": i%2 == 0})
		require.NoError(t, err)
		want = append(want, string(w))
	}
	require.NoError(t, os.WriteFile(filepath.Join(in, "in.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	for _, delim := range []string{",", ";", "\t"} {
		out := filepath.Join(mid, fmt.Sprintf("d%d", delim[0]))
		j := runtimetest.Start(t, fmt.Sprintf(`
name: to-csv
operators:
  - {uid: in, type: file, path: %q, format: json}
  - {uid: out, type: file, from: [in], path: %q, format: csv, columns: [id, s, n, b], delimiter: %q, rolling: {maxPartSize: 2KiB}}
`, in, out, delim), runtimetest.Options{Types: testTypes})
		require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 20*time.Second), j.Info().Error)
		name := runtimetest.UniqueName(t)
		j = runtimetest.Start(t, fmt.Sprintf(`
name: from-csv
parallelism: 2
operators:
  - {uid: in, type: file, path: %q, format: csv, delimiter: %q}
  - {uid: out, type: test-collect, from: [in], name: %s, parallelism: 1}
`, out, delim, name), runtimetest.Options{Types: testTypes})
		require.Equal(t, api.StateFinished, runtimetest.Wait(t, j, 20*time.Second), j.Info().Error)
		var got []string
		for _, v := range runtimetest.Values(name) {
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(v), &m), v)
			b, err := json.Marshal(m)
			require.NoError(t, err)
			got = append(got, string(b))
		}
		w := append([]string(nil), want...)
		sort.Strings(w)
		sort.Strings(got)
		require.Equal(t, w, got, "delimiter %q", delim)
	}
}

// A CSV file with a row of the wrong width fails naming the file and the
// record; the header gives the names; columns override them.
func TestCSVSourceHeaderColumnsAndErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "x.csv")
	require.NoError(t, os.WriteFile(path, []byte("a,b\n1,x\n2,y,extra\n3,z\n"), 0o644))
	run := func(opts string) ([]string, string) {
		name := runtimetest.UniqueName(t)
		j := runtimetest.Start(t, fmt.Sprintf(`
name: csv
operators:
  - {uid: in, type: file, path: %q, format: csv%s}
  - {uid: out, type: test-collect, from: [in], name: %s}
`, path, opts, name), runtimetest.Options{Types: testTypes})
		runtimetest.Wait(t, j, 20*time.Second)
		return runtimetest.Values(name), j.Info().Error
	}
	vals, errText := run("")
	require.Equal(t, []string{`{"a":1,"b":"x"}`}, vals)
	require.Contains(t, errText, path+`: record 2 (byte 8): 3 fields where the header has 2 columns: "2,y,extra\n"`)
	vals, errText = run(", onDecodeError: skip, columns: [n, s], inferTypes: false")
	require.Empty(t, errText)
	require.Equal(t, []string{`{"n":"1","s":"x"}`, `{"n":"3","s":"z"}`}, vals)
	vals, _ = run(", onDecodeError: skip, header: false, columns: [n, s]")
	require.Equal(t, []string{`{"n":"a","s":"b"}`, `{"n":1,"s":"x"}`, `{"n":3,"s":"z"}`}, vals)
}

// The csv sink passes a record that is not a JSON object to onError:
// skip writes the others; the default fails naming the record.
func TestCSVSinkRecordThatIsNotAnObject(t *testing.T) {
	t.Parallel()
	in := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(in, "x.txt"), []byte("{\"a\":1}\nplain text\n{\"a\":2}\n"), 0o644))
	for _, onError := range []string{"skip", "fail"} {
		out := filepath.Join(t.TempDir(), "out")
		j := runtimetest.Start(t, fmt.Sprintf(`
name: csv-sink
operators:
  - {uid: in, type: file, path: %q}
  - {uid: out, type: file, from: [in], path: %q, format: csv, columns: [a], onError: %s}
`, in, out, onError), runtimetest.Options{Types: testTypes})
		state := runtimetest.Wait(t, j, 20*time.Second)
		if onError == "skip" {
			require.Equal(t, api.StateFinished, state, j.Info().Error)
			require.Equal(t, []string{"1", "2", "a"}, runtimetest.FinishedLines(t, out))
		} else {
			require.Equal(t, api.StateFailed, state)
			require.Contains(t, j.Info().Error, "not a JSON object")
		}
	}
}
