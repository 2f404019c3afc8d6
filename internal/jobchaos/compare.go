package jobchaos

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/flinkgo/flinkgo/internal/dev/consume"
)

// maxExamples bounds the rows a report lists per kind of difference.
const maxExamples = 10

// SinkReport compares what one sink committed in the two runs.
type SinkReport struct {
	UID       string    `json:"uid"`
	Type      string    `json:"type"`
	Guarantee Guarantee `json:"guarantee"`
	// Undisturbed and Disturbed are where each run's output was.
	Undisturbed Output `json:"undisturbed"`
	Disturbed   Output `json:"disturbed"`
	// Compared is the rows of the undisturbed run; Received the disturbed
	// run's.
	Compared int `json:"compared"`
	Received int `json:"received"`
	// Lost rows are missing from the disturbed run, Duplicated ones are
	// there more often than in the undisturbed one, Unexpected ones match
	// no row of it, and a Changed row is a lost and an unexpected row with
	// at least half their fields in common (counted once, not as lost and
	// unexpected).
	Lost       int  `json:"lost"`
	Duplicated int  `json:"duplicated"`
	Unexpected int  `json:"unexpected"`
	Changed    int  `json:"changed"`
	Identical  bool `json:"identical"`
	// Examples of each, at most 10.
	LostRows       []RowCount `json:"lostRows,omitempty"`
	DuplicatedRows []RowCount `json:"duplicatedRows,omitempty"`
	UnexpectedRows []RowCount `json:"unexpectedRows,omitempty"`
	ChangedRows    []Change   `json:"changedRows,omitempty"`
}

// RowCount is a row and how many times it is lost, duplicated or
// unexpected.
type RowCount struct {
	Row   string `json:"row"`
	Count int    `json:"count"`
}

// Change is a row of the undisturbed run and the disturbed row like it.
type Change struct {
	Expected string `json:"expected"`
	Received string `json:"received"`
}

func (r *runner) compare(ctx context.Context, base, dist *place) error {
	rep := r.rep
	rep.Identical = rep.Disturbed.State == "FINISHED"
	for _, s := range r.j.Sinks {
		sr := SinkReport{UID: s.UID, Type: s.Type, Guarantee: s.Guarantee, Undisturbed: base.outputs[s.UID], Disturbed: dist.outputs[s.UID]}
		want, err := readOutput(ctx, s, sr.Undisturbed)
		if err != nil {
			return fmt.Errorf("sink %s, undisturbed run: %w", s.UID, err)
		}
		got, err := readOutput(ctx, s, sr.Disturbed)
		if err != nil {
			return fmt.Errorf("sink %s, disturbed run: %w", s.UID, err)
		}
		diff(&sr, want, got)
		if !r.o.Keep {
			// Removed with the runs' directories and topics: not places
			// to look at.
			sr.Undisturbed.Dir, sr.Disturbed.Dir = "", ""
		}
		rep.Sinks = append(rep.Sinks, sr)
		rep.Compared += sr.Compared
		rep.Lost += sr.Lost
		rep.Duplicated += sr.Duplicated
		rep.Unexpected += sr.Unexpected
		rep.Changed += sr.Changed
		rep.Identical = rep.Identical && sr.Identical
	}
	return nil
}

// readOutput counts the rows a sink committed: each line of a file sink's
// finished files (hidden in-progress and pending files are not committed),
// each record of a Kafka sink's topic, read_committed for an exactly-once
// sink (records of aborted transactions are not output) and
// read_uncommitted otherwise.
func readOutput(ctx context.Context, s Sink, o Output) (map[string]int, error) {
	rows := map[string]int{}
	if o.Dir != "" {
		if _, err := os.Stat(o.Dir); os.IsNotExist(err) {
			return rows, nil // the job wrote nothing
		}
		err := filepath.WalkDir(o.Dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if path != o.Dir && strings.HasPrefix(d.Name(), ".") {
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() {
				return nil
			}
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			sc := bufio.NewScanner(f)
			sc.Buffer(make([]byte, 64<<10), 64<<20)
			for sc.Scan() {
				rows[canonicalRow(nil, sc.Bytes())]++
			}
			return sc.Err()
		})
		return rows, err
	}
	_, err := consume.Kafka(ctx, consume.KafkaConfig{Brokers: s.Brokers, Topic: o.Topic, ReadCommitted: s.Guarantee == ExactlyOnce},
		func(rec consume.Record) error {
			rows[canonicalRow(rec.Key, rec.Value)]++
			return nil
		})
	return rows, err
}

// canonicalRow is a row as compared: a JSON value with its object keys
// sorted (so two runs that print one object's fields in another order
// agree), else the text; a Kafka record's key, when it has one, first.
func canonicalRow(key, value []byte) string {
	v := string(value)
	if len(value) > 0 && (value[0] == '{' || value[0] == '[') {
		dec := json.NewDecoder(bytes.NewReader(value))
		dec.UseNumber()
		var x any
		if err := dec.Decode(&x); err == nil && !dec.More() {
			if b, err := json.Marshal(x); err == nil {
				v = string(b)
			}
		}
	}
	if len(key) > 0 {
		return "key " + strconv.Quote(string(key)) + " " + v
	}
	return v
}

// diff compares the rows of the disturbed run (got) with the undisturbed
// one's (want) as multisets.
func diff(sr *SinkReport, want, got map[string]int) {
	var lost, extra []RowCount
	for row, n := range want {
		sr.Compared += n
		if m := got[row]; m < n {
			lost = append(lost, RowCount{row, n - m})
		} else if m > n {
			sr.Duplicated += m - n
			sr.DuplicatedRows = append(sr.DuplicatedRows, RowCount{row, m - n})
		}
	}
	for row, m := range got {
		sr.Received += m
		if want[row] == 0 {
			extra = append(extra, RowCount{row, m})
		}
	}
	sortRows(lost)
	sortRows(extra)
	sortRows(sr.DuplicatedRows)
	// Pair lost and unexpected rows that share most of their fields: the
	// same record with a changed value. Quadratic, so only for a few.
	if len(lost) > 0 && len(extra) > 0 && len(lost)*len(extra) <= 1_000_000 {
		for i := range lost {
			for lost[i].Count > 0 {
				best, bestScore := -1, 0.0
				for k := range extra {
					if extra[k].Count == 0 {
						continue
					}
					if s := similarity(lost[i].Row, extra[k].Row); s >= 0.5 && s > bestScore {
						best, bestScore = k, s
					}
				}
				if best < 0 {
					break
				}
				n := min(lost[i].Count, extra[best].Count)
				lost[i].Count -= n
				extra[best].Count -= n
				sr.Changed += n
				if len(sr.ChangedRows) < maxExamples {
					sr.ChangedRows = append(sr.ChangedRows, Change{Expected: lost[i].Row, Received: extra[best].Row})
				}
			}
		}
	}
	for _, l := range lost {
		if l.Count > 0 {
			sr.Lost += l.Count
			if len(sr.LostRows) < maxExamples {
				sr.LostRows = append(sr.LostRows, l)
			}
		}
	}
	for _, e := range extra {
		if e.Count > 0 {
			sr.Unexpected += e.Count
			if len(sr.UnexpectedRows) < maxExamples {
				sr.UnexpectedRows = append(sr.UnexpectedRows, e)
			}
		}
	}
	if len(sr.DuplicatedRows) > maxExamples {
		sr.DuplicatedRows = sr.DuplicatedRows[:maxExamples]
	}
	sr.Identical = sr.Lost+sr.Duplicated+sr.Unexpected+sr.Changed == 0
}

func sortRows(rs []RowCount) {
	sort.Slice(rs, func(i, j int) bool { return rs[i].Row < rs[j].Row })
}

// similarity is the share of the top-level fields of two JSON objects
// (and the record key) that are equal; 0 for rows that are not objects.
func similarity(a, b string) float64 {
	ka, va := splitKey(a)
	kb, vb := splitKey(b)
	var ma, mb map[string]json.RawMessage
	if json.Unmarshal([]byte(va), &ma) != nil || json.Unmarshal([]byte(vb), &mb) != nil || len(ma) == 0 {
		return 0
	}
	same, all := 0, 0
	for k, x := range ma {
		all++
		if y, ok := mb[k]; ok && bytes.Equal(x, y) {
			same++
		}
	}
	for k := range mb {
		if _, ok := ma[k]; !ok {
			all++
		}
	}
	if ka != kb {
		all++
	}
	return float64(same) / float64(all)
}

func splitKey(row string) (key, value string) {
	if !strings.HasPrefix(row, "key \"") {
		return "", row
	}
	rest := row[len("key "):]
	q, err := strconv.QuotedPrefix(rest)
	if err != nil {
		return "", row
	}
	return q, strings.TrimPrefix(rest[len(q):], " ")
}
