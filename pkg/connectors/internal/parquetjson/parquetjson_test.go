package parquetjson

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"
)

type row struct {
	ID    int64     `parquet:"id"`
	N     *int32    `parquet:"n,optional"`
	Score float64   `parquet:"score"`
	F     float32   `parquet:"f"`
	OK    *bool     `parquet:"ok,optional"`
	Name  string    `parquet:"name"`
	TS    time.Time `parquet:"ts,timestamp(millisecond)"`
	TU    time.Time `parquet:"tu,timestamp(microsecond)"`
	Doc   string    `parquet:"doc,json"`
	Bin   []byte    `parquet:"bin"`
}

func write(t *testing.T, rows []row) []byte {
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[row](&buf, parquet.MaxRowsPerRowGroup(2))
	_, err := w.Write(rows)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return buf.Bytes()
}

func readAll(t *testing.T, data []byte, skip int64) ([]string, int64) {
	r, err := Open(bytes.NewReader(data), int64(len(data)), skip)
	require.NoError(t, err)
	defer r.Close()
	var out []string
	for {
		b, err := r.Next(nil)
		if err == io.EOF {
			return out, r.Rows()
		}
		require.NoError(t, err)
		out = append(out, string(b))
	}
}

// TestRowsAsJSON reads every supported column type as JSON, across row
// groups, and resumes at a row position.
func TestRowsAsJSON(t *testing.T) {
	n := int32(-7)
	yes := true
	ts := time.UnixMilli(1700000000123).UTC()
	data := write(t, []row{
		{ID: 1, N: &n, Score: 1.5, F: 0.25, OK: &yes, Name: "a \"q\"\n", TS: ts, TU: ts.Add(999 * time.Microsecond), Doc: `{"x":[1,2]}`, Bin: []byte("b")},
		{ID: 2, Score: -2, Name: "é", TS: ts, TU: ts, Doc: `"s"`},
		{ID: 3, Score: 3, Name: "", TS: ts, TU: ts, Doc: `null`},
	})
	got, pos := readAll(t, data, 0)
	require.Equal(t, []string{
		`{"id":1,"n":-7,"score":1.5,"f":0.25,"ok":true,"name":"a \"q\"\n","ts":1700000000123,"tu":1700000000123,"doc":{"x":[1,2]},"bin":"b"}`,
		`{"id":2,"n":null,"score":-2,"f":0,"ok":null,"name":"é","ts":1700000000123,"tu":1700000000123,"doc":"s","bin":""}`,
		`{"id":3,"n":null,"score":3,"f":0,"ok":null,"name":"","ts":1700000000123,"tu":1700000000123,"doc":null,"bin":""}`,
	}, got)
	require.Equal(t, int64(3), pos)
	rest, pos := readAll(t, data, 2)
	require.Equal(t, got[2:], rest)
	require.Equal(t, int64(3), pos)
	_, err := Open(bytes.NewReader(data), int64(len(data)), 4)
	require.ErrorContains(t, err, "the file has 3 rows")
}

func TestRefusesNestedAndGarbage(t *testing.T) {
	type nested struct {
		Tags []string `parquet:"tags,list"`
	}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[nested](&buf)
	_, err := w.Write([]nested{{Tags: []string{"a"}}})
	require.NoError(t, err)
	require.NoError(t, w.Close())
	_, err = Open(bytes.NewReader(buf.Bytes()), int64(buf.Len()), 0)
	require.ErrorContains(t, err, `column "tags" is`)
	_, err = Open(bytes.NewReader([]byte("not parquet")), 11, 0)
	require.ErrorContains(t, err, "not a readable Parquet file")
}
