package natsserver

import (
	"errors"
	"fmt"
	"strings"
)

// Stream is a JetStream stream to create at Start: its name and the
// subjects it captures (the name itself when none are given).
type Stream struct {
	Name     string
	Subjects []string
}

// ParseStream reads "name" or "name:subject1,subject2" (the form of
// `flinkgo dev nats --stream`).
func ParseStream(s string) (Stream, error) {
	name, subjects, hasSubjects := strings.Cut(s, ":")
	st := Stream{Name: strings.TrimSpace(name)}
	if hasSubjects {
		for _, subj := range strings.Split(subjects, ",") {
			st.Subjects = append(st.Subjects, strings.TrimSpace(subj))
		}
	}
	if err := st.Validate(); err != nil {
		return Stream{}, fmt.Errorf("stream %q: %w", s, err)
	}
	return st, nil
}

// Validate reports a name or subject JetStream would refuse.
func (s Stream) Validate() error {
	if s.Name == "" {
		return errors.New("empty stream name")
	}
	if strings.ContainsAny(s.Name, ".*> \t") {
		return fmt.Errorf("stream name %q must not contain '.', '*', '>' or spaces", s.Name)
	}
	for _, subj := range s.Subjects {
		if subj == "" || strings.ContainsAny(subj, " \t") || strings.Contains(subj, "..") ||
			strings.HasPrefix(subj, ".") || strings.HasSuffix(subj, ".") {
			return fmt.Errorf("bad subject %q", subj)
		}
	}
	return nil
}

// subjects returns the captured subjects (the name when none are given).
func (s Stream) subjects() []string {
	if len(s.Subjects) == 0 {
		return []string{s.Name}
	}
	return s.Subjects
}

// String gives the ParseStream form.
func (s Stream) String() string {
	return s.Name + ":" + strings.Join(s.subjects(), ",")
}
