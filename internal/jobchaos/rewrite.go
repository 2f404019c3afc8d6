package jobchaos

import (
	"fmt"
	"path/filepath"

	"github.com/goccy/go-yaml"
)

// Output is where one sink of one run writes: a directory or a topic.
type Output struct {
	Dir   string `json:"dir,omitempty"`
	Topic string `json:"topic,omitempty"`
}

// Rewrite returns the spec a run submits: the user's, with every sink
// writing a private place of the run (file sinks into dir/<uid>, Kafka
// sinks into a topic of their own with their own transactional ids), every
// Kafka source bounded at the topic's current end and reading with a
// consumer group of the run (the user's group offsets stay untouched).
// The user's outputs are never written. name tells the runs apart
// ("undisturbed", "disturbed"); nonce tells this chaos run from others on
// the same brokers.
func (j *Job) Rewrite(name, dir, nonce string) ([]byte, map[string]Output, error) {
	var doc yaml.MapSlice
	if err := yaml.UnmarshalWithOptions(j.Src, &doc, yaml.UseOrderedMap()); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", j.File, err)
	}
	ops, ok := get(doc, "operators").([]any)
	if !ok {
		return nil, nil, fmt.Errorf("%s: operators is not a list", j.File)
	}
	outs := map[string]Output{}
	edit := func(i int, kv ...any) error {
		m, ok := ops[i].(yaml.MapSlice)
		if !ok {
			return fmt.Errorf("%s: operators[%d] is not a mapping", j.File, i)
		}
		for k := 0; k < len(kv); k += 2 {
			m = set(m, kv[k].(string), kv[k+1])
		}
		ops[i] = m
		return nil
	}
	tag := fmt.Sprintf("chaos-%s-%s", nonce, name)
	for _, s := range j.Source {
		if s.Type != "kafka" {
			continue
		}
		if err := edit(s.index, "bounded", "latest", "groupId", "flinkgo-"+tag+"-"+s.UID); err != nil {
			return nil, nil, err
		}
	}
	for _, s := range j.Sinks {
		var err error
		switch s.Type {
		case "file":
			out := filepath.Join(dir, s.UID)
			outs[s.UID] = Output{Dir: out}
			err = edit(s.index, "path", out)
		case "kafka":
			topic := s.Topic + "." + tag
			outs[s.UID] = Output{Topic: topic}
			if s.Guarantee == ExactlyOnce {
				// Transactional ids of the run's own: two runs (or a run
				// and the user's job) sharing one would fence each other.
				err = edit(s.index, "topic", topic, "transactionalIdPrefix", "flinkgo-"+tag+"-"+s.UID)
			} else {
				err = edit(s.index, "topic", topic)
			}
		}
		if err != nil {
			return nil, nil, err
		}
	}
	doc = set(doc, "operators", ops)
	out, err := yaml.Marshal(doc)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", j.File, err)
	}
	return out, outs, nil
}

func get(m yaml.MapSlice, key string) any {
	for _, it := range m {
		if it.Key == key {
			return it.Value
		}
	}
	return nil
}

// set replaces key's value, or appends key.
func set(m yaml.MapSlice, key string, v any) yaml.MapSlice {
	for i, it := range m {
		if it.Key == key {
			m[i].Value = v
			return m
		}
	}
	return append(m, yaml.MapItem{Key: key, Value: v})
}
