package spectest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Row is a record as a test expects it or a sink received it. Value is in
// canonical form (canonical); Key and Timestamp are compared when the
// expected row has them (records:), and always set on received rows.
type Row struct {
	Value     any
	Key       *string
	Timestamp *int64
	// Line is where an expected row is in the tests file (0: received).
	Line int
	text string // canonical JSON of Value, the comparison key
}

// JSON is the row's value as compact JSON, keys sorted.
func (r *Row) JSON() string {
	if r.text == "" {
		r.text = string(mustJSON(r.Value))
	}
	return r.text
}

// format shows the row; meta: with its key and timestamp.
func (r *Row) format(meta bool) string {
	s := r.JSON()
	if meta && r.Key != nil {
		s += " key " + strconv.Quote(*r.Key)
	}
	if meta && r.Timestamp != nil {
		s += fmt.Sprintf(" timestamp %d", *r.Timestamp)
	}
	return s
}

// matches reports whether received row got is what r expects.
func (r *Row) matches(got *Row) bool {
	return r.JSON() == got.JSON() &&
		(r.Key == nil || got.Key != nil && *r.Key == *got.Key) &&
		(r.Timestamp == nil || got.Timestamp != nil && *r.Timestamp == *got.Timestamp)
}

// constraints counts what r compares besides its value.
func (r *Row) constraints() int {
	n := 0
	if r.Key != nil {
		n++
	}
	if r.Timestamp != nil {
		n++
	}
	return n
}

// received is a record a sink received, as a row: its value read as JSON
// when it is JSON, else as text.
func received(key, value []byte, ts int64) Row {
	k := string(key)
	return Row{Value: outputValue(value), Key: &k, Timestamp: &ts}
}

func outputValue(b []byte) any {
	if !json.Valid(b) {
		return string(b)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return string(b)
	}
	return canonical(v)
}

// canonical makes values that mean the same compare equal: numbers that
// are whole are int64 whatever they were written as (1, 1.0, 1e0), maps
// and lists are canonical all through.
func canonical(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = canonical(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = canonical(e)
		}
		return out
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, err := x.Float64()
		if err != nil {
			return x.String()
		}
		return canonical(f)
	case int:
		return int64(x)
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<63 {
			return int64(x)
		}
		return x
	}
	return v
}

func mustJSON(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return []byte(fmt.Sprintf("%q", fmt.Sprint(v)))
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

// MaxShownRows bounds the received rows a failed condition lists.
const MaxShownRows = 20

// SinkResult is how what one sink received compares with what the test
// expects of it; Failed when anything differs.
type SinkResult struct {
	Sink string `json:"sink"`
	// Line is where the expectation is in the tests file.
	Line     int `json:"line"`
	Received int `json:"received"`
	// Missing are expected rows that did not arrive, Unexpected received
	// rows nothing expected, Changed pairs of the two that differ in only
	// some fields.
	Missing    []RowRef `json:"missing,omitempty"`
	Unexpected []RowRef `json:"unexpected,omitempty"`
	Changed    []Change `json:"changed,omitempty"`
	// Problems are the other differences: a count, an order.
	Problems []string `json:"problems,omitempty"`
	// Rows are the rows received, shown when only conditions (count,
	// contains) failed, which say nothing of the others (the first
	// MaxShownRows).
	Rows   []RowRef `json:"rows,omitempty"`
	Failed bool     `json:"failed"`
}

// RowRef is a row in a report: its value as JSON and, for an expected
// row, its line.
type RowRef struct {
	Row  string `json:"row"`
	Line int    `json:"line,omitempty"`
}

// Change is an expected row and the received row most like it.
type Change struct {
	Expected RowRef      `json:"expected"`
	Received RowRef      `json:"received"`
	Fields   []FieldDiff `json:"fields"`
}

// FieldDiff is one field of a changed row ("(key)" and "(timestamp)" for
// the record's own).
type FieldDiff struct {
	Field    string `json:"field"`
	Expected string `json:"expected"`
	Received string `json:"received"`
}

// compare checks got against e.
func compare(e *expectation, got []Row) SinkResult {
	res := SinkResult{Sink: e.sink, Line: e.line, Received: len(got)}
	meta := false
	for i := range e.exact {
		meta = meta || e.exact[i].constraints() > 0
	}
	for i := range e.contains {
		meta = meta || e.contains[i].constraints() > 0
	}
	if e.exactSet {
		missing, unexpected := multisetDiff(e.exact, got)
		res.addDiff(e.exact, got, missing, unexpected, meta)
		if len(missing) == 0 && len(unexpected) == 0 && e.ordered {
			for i := range e.exact {
				if !e.exact[i].matches(&got[i]) {
					res.Problems = append(res.Problems, fmt.Sprintf("the rows arrived in another order (ordered: true): row %d is %s, expected %s (line %d)",
						i+1, got[i].format(meta), e.exact[i].format(meta), e.exact[i].Line))
					break
				}
			}
		}
	}
	if e.contains != nil {
		missing, _ := multisetDiff(e.contains, got)
		for _, i := range missing {
			res.Missing = append(res.Missing, RowRef{Row: e.contains[i].format(meta), Line: e.contains[i].Line})
		}
		if len(missing) == 0 && e.ordered {
			if at := subsequence(e.contains, got); at >= 0 {
				res.Problems = append(res.Problems, fmt.Sprintf("the rows contains lists arrived, but not in its order (ordered: true): %s (line %d) came too early",
					e.contains[at].format(meta), e.contains[at].Line))
			}
		}
	}
	if e.count != nil && *e.count != len(got) {
		res.Problems = append(res.Problems, fmt.Sprintf("expected %d rows (count), received %d", *e.count, len(got)))
	}
	res.Failed = len(res.Missing)+len(res.Unexpected)+len(res.Changed)+len(res.Problems) > 0
	if res.Failed && !e.exactSet {
		for i := range got[:min(len(got), MaxShownRows)] {
			res.Rows = append(res.Rows, RowRef{Row: got[i].format(meta)})
		}
	}
	return res
}

// multisetDiff matches each expected row to a received one that it
// matches, the most constrained rows (key, timestamp) first, and returns
// the indexes of the expected and received rows left over.
func multisetDiff(want, got []Row) (missing, unexpected []int) {
	order := make([]int, len(want))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return want[order[a]].constraints() > want[order[b]].constraints() })
	byValue := map[string][]int{}
	for i := range got {
		byValue[got[i].JSON()] = append(byValue[got[i].JSON()], i)
	}
	used := make([]bool, len(got))
	for _, wi := range order {
		w := &want[wi]
		found := false
		for _, gi := range byValue[w.JSON()] {
			if !used[gi] && w.matches(&got[gi]) {
				used[gi], found = true, true
				break
			}
		}
		if !found {
			missing = append(missing, wi)
		}
	}
	sort.Ints(missing)
	for i, u := range used {
		if !u {
			unexpected = append(unexpected, i)
		}
	}
	return missing, unexpected
}

// subsequence returns -1 when want appears in got in its order, else the
// index of the first row of want that does not.
func subsequence(want, got []Row) int {
	g := 0
	for i := range want {
		for g < len(got) && !want[i].matches(&got[g]) {
			g++
		}
		if g == len(got) {
			return i
		}
		g++
	}
	return -1
}

// addDiff reports missing and unexpected rows, pairing those that differ
// in at most half their fields as changed, the most alike first.
func (res *SinkResult) addDiff(want, got []Row, missing, unexpected []int, meta bool) {
	type pair struct{ w, g, score int }
	var pairs []pair
	for _, wi := range missing {
		for _, gi := range unexpected {
			if s, ok := likeness(&want[wi], &got[gi]); ok {
				pairs = append(pairs, pair{wi, gi, s})
			}
		}
	}
	sort.SliceStable(pairs, func(a, b int) bool { return pairs[a].score > pairs[b].score })
	wDone, gDone := map[int]bool{}, map[int]bool{}
	var changed []pair
	for _, p := range pairs {
		if !wDone[p.w] && !gDone[p.g] {
			wDone[p.w], gDone[p.g] = true, true
			changed = append(changed, p)
		}
	}
	sort.Slice(changed, func(a, b int) bool { return changed[a].w < changed[b].w })
	for _, wi := range missing {
		if !wDone[wi] {
			res.Missing = append(res.Missing, RowRef{Row: want[wi].format(meta), Line: want[wi].Line})
		}
	}
	for _, gi := range unexpected {
		if !gDone[gi] {
			res.Unexpected = append(res.Unexpected, RowRef{Row: got[gi].format(meta)})
		}
	}
	for _, p := range changed {
		res.Changed = append(res.Changed, Change{Expected: RowRef{Row: want[p.w].format(meta), Line: want[p.w].Line},
			Received: RowRef{Row: got[p.g].format(meta)}, Fields: fieldDiffs(&want[p.w], &got[p.g])})
	}
}

// fields are a row's comparable parts: the top-level fields of an object
// value (the whole value otherwise) and the key and timestamp an expected
// row constrains (of want).
func fields(r, want *Row) map[string]string {
	out := map[string]string{}
	if m, ok := r.Value.(map[string]any); ok {
		for k, v := range m {
			out[k] = string(mustJSON(v))
		}
	} else {
		out["(value)"] = r.JSON()
	}
	if want.Key != nil && r.Key != nil {
		out["(key)"] = strconv.Quote(*r.Key)
	}
	if want.Timestamp != nil && r.Timestamp != nil {
		out["(timestamp)"] = strconv.FormatInt(*r.Timestamp, 10)
	}
	return out
}

// likeness scores how alike two rows are (fields equal); ok when at least
// half of their fields are.
func likeness(want, got *Row) (int, bool) {
	a, b := fields(want, want), fields(got, want)
	union, same := len(a), 0
	for k, v := range b {
		if w, ok := a[k]; !ok {
			union++
		} else if w == v {
			same++
		}
	}
	return same, same > 0 && 2*same >= union
}

func fieldDiffs(want, got *Row) []FieldDiff {
	a, b := fields(want, want), fields(got, want)
	var out []FieldDiff
	for _, k := range sortedKeys(a) {
		if v, ok := b[k]; !ok {
			out = append(out, FieldDiff{Field: k, Expected: a[k], Received: "(none)"})
		} else if v != a[k] {
			out = append(out, FieldDiff{Field: k, Expected: a[k], Received: v})
		}
	}
	for _, k := range sortedKeys(b) {
		if _, ok := a[k]; !ok {
			out = append(out, FieldDiff{Field: k, Expected: "(none)", Received: b[k]})
		}
	}
	return out
}

// describeChange is a change's fields in one line.
func describeChange(c Change) string {
	parts := make([]string, len(c.Fields))
	for i, f := range c.Fields {
		parts[i] = fmt.Sprintf("%s: expected %s, received %s", f.Field, f.Expected, f.Received)
	}
	return strings.Join(parts, "; ")
}
