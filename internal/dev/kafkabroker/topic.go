package kafkabroker

import (
	"fmt"
	"strconv"
	"strings"
)

// maxTopicNameLen is Kafka's limit on a topic name.
const maxTopicNameLen = 249

// Topic names a topic and its partition count.
type Topic struct {
	Name       string
	Partitions int
}

// String returns the topic in the form ParseTopic reads: "name:partitions".
func (t Topic) String() string {
	return t.Name + ":" + strconv.Itoa(t.Partitions)
}

// ParseTopic reads "name:partitions" or "name" (one partition), the form
// `flinkgo dev kafka --topic` takes.
func ParseTopic(s string) (Topic, error) {
	name, parts, hasParts := strings.Cut(s, ":")
	t := Topic{Name: name, Partitions: 1}
	if hasParts {
		n, err := strconv.Atoi(parts)
		if err != nil {
			return Topic{}, fmt.Errorf("topic %q: partitions %q is not a number (want name or name:partitions, e.g. flink-test:4)", s, parts)
		}
		t.Partitions = n
	}
	if err := t.Validate(); err != nil {
		return Topic{}, fmt.Errorf("topic %q: %w", s, err)
	}
	return t, nil
}

// Validate checks the name against Kafka's rules (1 to 249 characters of
// [a-zA-Z0-9._-], not "." or "..") and that Partitions is at least 1.
func (t Topic) Validate() error {
	if err := validateTopicName(t.Name); err != nil {
		return err
	}
	if t.Partitions < 1 {
		return fmt.Errorf("partitions must be at least 1, got %d", t.Partitions)
	}
	return nil
}

func validateTopicName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("empty topic name")
	case name == "." || name == "..":
		return fmt.Errorf("topic name %q is not allowed", name)
	case len(name) > maxTopicNameLen:
		return fmt.Errorf("topic name is %d characters, the limit is %d", len(name), maxTopicNameLen)
	}
	for _, r := range name {
		if !isTopicRune(r) {
			return fmt.Errorf("topic name %q has %q; allowed are letters, digits, '.', '_' and '-'", name, r)
		}
	}
	return nil
}

func isTopicRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
		r == '.' || r == '_' || r == '-'
}
