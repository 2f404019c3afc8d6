// Package print is a sink that writes each record's value as a line to the
// daemon's stdout and to the job's .out file (as Flink's TaskManager does).
// It gives no delivery guarantee: lines of a failed attempt stay printed.
package print

import (
	"strconv"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/runtime"
)

type options struct {
	// Prefix is written before each line (Flink's print(sinkIdentifier)).
	Prefix string `yaml:"prefix"`
}

// Definitions returns the operator types of this package, for a
// runtime.Registry.
func Definitions() []runtime.Definition {
	return []runtime.Definition{
		{Type: "print", Kind: api.KindSink,
			Doc: "writes each record's value as a line to the daemon's stdout and the job's .out file; prefix", Configure: configure},
	}
}

func configure(c *runtime.ConfigContext) *runtime.Plan {
	var o options
	c.Decode(&o)
	return &runtime.Plan{NewOperator: func() runtime.Operator { return &sink{prefix: o.Prefix} }}
}

type sink struct {
	ctx    *runtime.Context
	prefix string
	buf    []byte
}

func (s *sink) Open(ctx *runtime.Context) error {
	s.ctx = ctx
	if ctx.Parallelism() > 1 {
		// Flink prefixes lines with the 1-based subtask when parallel.
		s.prefix += strconv.Itoa(ctx.Subtask()+1) + "> "
	}
	return nil
}

func (s *sink) Process(b *runtime.Batch, _ runtime.Output) error {
	s.buf = s.buf[:0]
	for _, r := range b.Records {
		s.buf = append(s.buf, s.prefix...)
		s.buf = append(s.buf, r.Value...)
		s.buf = append(s.buf, '\n')
	}
	_, err := s.ctx.Stdout().Write(s.buf)
	return err
}

func (s *sink) Close() error { return nil }
