package file

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestBucketPatterns(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	at := time.Date(2024, 3, 9, 7, 5, 4, 321e6, time.UTC)
	for _, c := range []struct {
		spec string
		loc  *time.Location
		kind string
		want string
	}{
		{"yyyy-MM-dd--HH-mm", time.UTC, "java", "2024-03-09--07-05"}, // the blog's job
		{"yyyy-MM-dd--HH", time.UTC, "java", "2024-03-09--07"},       // Flink's default
		{"yyyy-MM-dd--HH", berlin, "java", "2024-03-09--08"},
		{"yyyy/MM/dd/HH", time.UTC, "java", "2024/03/09/07"},
		{"'dt='yyyy-MM-dd/'hour='HH", time.UTC, "java", "dt=2024-03-09/hour=07"},
		{"yy-M-d-h-m-s a", time.UTC, "java", "24-3-9-7-5-4 AM"},
		{"yyyyMMdd'T'HHmmss.SSS", time.UTC, "java", "20240309T070504.321"},
		{"EEE-MMM-dd 'it''s' DDD", time.UTC, "java", "Sat-Mar-09 it's 069"},
		{"'Jan 2006 'yyyy", time.UTC, "java", "Jan 2006 2024"}, // literals never read as layout
		{"2006-01-02--15", time.UTC, "go", "2024-03-09--07"},
		{"2006/01/02/15-04", time.UTC, "go", "2024/03/09/07-05"},
		{"Jan-2006", time.UTC, "go", "Mar-2024"},
		{"none", time.UTC, "none", ""},
	} {
		b, err := newBucketer(c.spec, c.loc)
		require.NoError(t, err, c.spec)
		require.Equal(t, c.kind, b.Kind, c.spec)
		require.Equal(t, c.want, b.ID(at.UnixMilli()), c.spec)
	}
}

func TestBucketPatternErrors(t *testing.T) {
	for spec, want := range map[string]string{
		"":             "is empty",
		"bucket":       "contains no date or time element",
		"yyyy-ww":      `unsupported pattern letter 'w'`,
		"HHmmSSS":      "must follow '.' or ','",
		"yyyy-'MM":     "unterminated quote",
		"/2006":        "is not a relative path",
		"2006/../01":   "is not a clean path",
		"'.'yyyy":      "starting with '.'",
		"2006-01//02":  "is not a clean path",
		"yyyy\\MM":     "is not a relative path",
		"../yyyy-MM":   "is not a clean path",
		"yyyy-MM-dd/.": "is not a clean path",
	} {
		_, err := newBucketer(spec, time.UTC)
		require.ErrorContains(t, err, want, spec)
	}
}

func TestBucketCachesPerSecond(t *testing.T) {
	b, err := newBucketer("yyyy-MM-dd--HH-mm-ss", time.UTC)
	require.NoError(t, err)
	base := time.Date(2024, 1, 1, 0, 0, 59, 0, time.UTC).UnixMilli()
	first := b.ID(base)
	require.Equal(t, "2024-01-01--00-00-59", first)
	require.Equal(t, "2024-01-01--00-00-59", b.ID(base+999))
	require.Equal(t, "2024-01-01--00-01-00", b.ID(base+1000))
	require.Equal(t, "1969-12-31--23-59-59", b.ID(-1))
	require.Equal(t, 0.0, testing.AllocsPerRun(100, func() { b.ID(base + 1500) }))
}
