package cli

import (
	"errors"
	"strings"
	"unicode"

	"github.com/spf13/pflag"

	"github.com/flinkgo/flinkgo/internal/dev/payload"
	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/connectors/datagen"
)

// recordFlags are the flags of dev produce that say what record idx is
// (package payload): the demo sequence, datagen's events, or expressions.
type recordFlags struct {
	expr, keyExpr string
	events        bool
	ev            datagen.EventOptions
}

// eventFlags are the flags of --events, named after datagen's options.
var eventFlags = []string{"keys", "key-prefix", "amount-min", "amount-max", "start-time", "step",
	"out-of-orderness", "late-every", "late-by", "seed"}

func (f *recordFlags) register(fs *pflag.FlagSet) {
	d := datagen.DefaultEventOptions()
	fs.StringVar(&f.expr, "expr", "", `value of record idx: an expression over idx (with --events also user, amount, ts, late), `+
		`e.g. '{"user": "u" + string(idx % 100), "amount": idx % 7, "ts": 1767225600000 + idx * 10}'`)
	fs.StringVar(&f.keyExpr, "key-expr", "", "Kafka key of record idx, an expression like --expr; keyed records are partitioned by key (murmur2)")
	fs.BoolVar(&f.events, "events", false, `write datagen's format events: {"idx", "user", "amount", "ts"}, the records a datagen job with the same options emits; ts is the Kafka timestamp`)
	fs.Int64Var(&f.ev.Keys, "keys", d.Keys, "--events: distinct users")
	fs.StringVar(&f.ev.KeyPrefix, "key-prefix", d.KeyPrefix, "--events: prefix of the user field")
	fs.Int64Var(&f.ev.AmountMin, "amount-min", d.AmountMin, "--events: smallest amount")
	fs.Int64Var(&f.ev.AmountMax, "amount-max", d.AmountMax, "--events: largest amount")
	fs.StringVar(&f.ev.StartTime, "start-time", d.StartTime, "--events: event time of idx 0 (RFC 3339)")
	fs.DurationVar(&f.ev.Step, "step", d.Step, "--events: event time advance per idx")
	fs.DurationVar(&f.ev.OutOfOrderness, "out-of-orderness", d.OutOfOrderness, "--events: each ts is up to this much before its in-order time")
	fs.Int64Var(&f.ev.LateEvery, "late-every", d.LateEvery, "--events: every idx divisible by this is late (0: none)")
	fs.DurationVar(&f.ev.LateBy, "late-by", d.LateBy, "--events: how far before its in-order time a late record is")
	fs.Int64Var(&f.ev.Seed, "seed", d.Seed, "--events: seed of the pseudo-random users, amounts and delays")
}

// maker builds what the flags describe and tries it on idx first, so that
// a bad option or expression is refused (usage error, exit 2) before
// anything is sent.
func (f *recordFlags) maker(fs *pflag.FlagSet, first int64) (*payload.Maker, error) {
	o := payload.Options{Expr: f.expr, KeyExpr: f.keyExpr, First: first}
	if f.events {
		o.Events = &f.ev
	} else {
		for _, name := range eventFlags {
			if fs.Changed(name) {
				return nil, api.Errorf(api.CodeUsage, "--%s is an option of --events", name)
			}
		}
	}
	m, err := payload.New(o)
	var p datagen.Problem
	if errors.As(err, &p) {
		return nil, api.Errorf(api.CodeUsage, "--%s: %s", flagName(p.Field), p.Msg)
	}
	if err != nil {
		return nil, api.Errorf(api.CodeUsage, "%v", err)
	}
	return m, nil
}

// flagName is the flag of a datagen option: outOfOrderness → out-of-orderness.
func flagName(option string) string {
	var b strings.Builder
	for _, r := range option {
		if unicode.IsUpper(r) {
			b.WriteByte('-')
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}
