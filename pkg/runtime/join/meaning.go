package join

import (
	"fmt"
	"strings"
	"time"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/runtime/window"
)

// meaningVersion is the joins' state schema version as a restore checks
// it (see runtime.StateMeaning.Version): each side's buffered rows per
// key, with their timers. The encoding's own version (stateVersion) is
// read by the decoder and needs no check here.
const meaningVersion = 1

// commonMeaning is what a join's state means whatever its kind: which
// input is each side, the key each side's rows are stored under, and
// which rows it keeps for an outer join.
func commonMeaning(o commonOptions) *runtime.StateMeaning {
	return &runtime.StateMeaning{Version: meaningVersion, Judge: judge, Values: map[string]string{
		"left.from": o.Left.From, "right.from": o.Right.From,
		"left.key": normalize(o.Left.Key), "right.key": normalize(o.Right.Key),
		"how": howMeaning(o.How), "select": selectMeaning(o.Select), "where": normalize(o.Where),
	}}
}

// selectMeaning is a join's select list, "name: expr" in order.
func selectMeaning(sel api.NamedStrings) string {
	parts := make([]string, len(sel))
	for i, s := range sel {
		parts[i] = s.Name + ": " + normalize(s.Value)
	}
	return strings.Join(parts, ", ")
}

// howMeaning is how with its default written out.
func howMeaning(how string) string {
	if how == "" {
		return inner.String()
	}
	return how
}

// normalize is an expression with its spaces collapsed: reformatting one
// does not change what it means.
func normalize(src string) string { return strings.Join(strings.Fields(src), " ") }

// boundMeaning is an interval bound in ms as a duration ("" when none).
func boundMeaning(ms int64) string {
	if ms == unbounded {
		return ""
	}
	return (time.Duration(ms) * time.Millisecond).String()
}

func judge(name, was, now string) (bool, string) {
	if why, ok := window.JudgeWindow(name, was, now); ok {
		return false, why
	}
	switch name {
	case "select", "where":
		return true, fmt.Sprintf("%s is evaluated on each match, not stored: buffered rows are read the same and matched under the new %s", name, name)
	case "left.key", "right.key":
		return false, fmt.Sprintf("the snapshot's buffered %s rows are stored under the key %s: read under %s they would meet rows of other keys", strings.TrimSuffix(name, ".key"), was, now)
	case "left.from", "right.from":
		return false, fmt.Sprintf("the snapshot's buffered %s rows came from %s, not %s (swapping the sides of a join misreads every buffered row)", strings.TrimSuffix(name, ".from"), orNone(was), orNone(now))
	case "how":
		return false, fmt.Sprintf("the snapshot's rows were kept and marked for a %s join, not a %s join", was, now)
	case "lower", "upper", "until":
		return false, fmt.Sprintf("the snapshot's rows were kept and their cleanup timers set for %s %s: under %s %s some matches would be missed or made twice", name, orNone(was), name, orNone(now))
	}
	return false, ""
}

func orNone(v string) string {
	if v == "" {
		return "(none)"
	}
	return v
}
