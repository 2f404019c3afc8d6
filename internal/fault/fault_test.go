package fault

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRulesFireAsPlanned(t *testing.T) {
	var seen []string
	in := New(func(p string, a Action, _ []any) { seen = append(seen, p+":"+a.String()) },
		Rule{Point: "file.commit", Action: Error, Nth: 2, Every: 3, Times: 2},
		Rule{Point: "kafka.poll", Action: Error, Match: "src"},
	)
	var errs []int
	for i := 1; i <= 10; i++ {
		if err := in.Fire("file.commit", "files", 0); err != nil {
			require.True(t, errors.Is(err, ErrInjected))
			errs = append(errs, i)
		}
	}
	require.Equal(t, []int{2, 5}, errs)
	require.NoError(t, in.Fire("kafka.poll", "other", 0))
	require.Error(t, in.Fire("kafka.poll", "src", 1))
	planned, fired := in.Planned()
	require.Equal(t, 3, planned)
	require.Equal(t, 3, fired)
	require.Equal(t, 10, in.Hits("file.commit"))
	require.Equal(t, 2, in.Fired("file.commit"))
	require.Len(t, seen, 3)
}

func TestExitAndPanic(t *testing.T) {
	in := New(nil, Rule{Point: "task.open", Action: Exit}, Rule{Point: "task.snapshot", Action: Panic})
	code := 0
	in.exit = func(c int) { code = c }
	require.NoError(t, in.Fire("task.open"))
	require.Equal(t, 137, code)
	require.Panics(t, func() { _ = in.Fire("task.snapshot") })
}

func TestParse(t *testing.T) {
	rules, err := Parse("file.commit:exit,nth=3; kafka.poll:error,every=500,times=4,match=source ;task.snapshot:delay,delay=10ms")
	require.NoError(t, err)
	require.Len(t, rules, 3)
	require.Equal(t, Rule{Point: "file.commit", Action: Exit, Nth: 3}, rules[0])
	require.Equal(t, Rule{Point: "kafka.poll", Action: Error, Every: 500, Times: 4, Match: "source"}, rules[1])
	for _, bad := range []string{"nope:error", "file.commit", "file.commit:explode", "file.commit:error,nth", "file.commit:error,size=3", "file.commit:error,nth=x"} {
		_, err := Parse(bad)
		require.Error(t, err, bad)
	}
}

// Every point name in the code is registered, and every registered point
// is named in the code (point names are string literals passed to Fire or
// to a connector's helper that calls it).
func TestEveryCallSiteIsRegistered(t *testing.T) {
	lit := regexp.MustCompile(`"((?:task|checkpoint|file|kafka|nats|postgres)\.[a-z][a-z.-]*)"`)
	used := map[string]bool{}
	root := "../.."
	err := filepath.Walk(root, func(path string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(path, "internal/fault/") {
			return nil
		}
		for _, m := range lit.FindAllStringSubmatch(string(data), -1) {
			require.True(t, Known(m[1]), "%s fires unregistered point %q", path, m[1])
			used[m[1]] = true
		}
		return nil
	})
	require.NoError(t, err)
	for _, p := range Points {
		require.True(t, used[p.Name], "point %s has no call site", p.Name)
	}
}
