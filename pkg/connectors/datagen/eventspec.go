package datagen

import "github.com/flinkgo/flinkgo/pkg/runtime"

// configureEvents returns the generator the spec's options describe,
// reporting every invalid option at its line (nil then). When the format
// is not events (on false), any event option is reported as misplaced.
func configureEvents(c *runtime.ConfigContext, s *options, on bool) *Events {
	o := DefaultEventOptions()
	for _, f := range []struct {
		name  string
		set   bool
		apply func()
	}{
		{"keys", s.Keys != nil, func() { o.Keys = *s.Keys }},
		{"keyPrefix", s.KeyPrefix != nil, func() { o.KeyPrefix = *s.KeyPrefix }},
		{"amountMin", s.AmountMin != nil, func() { o.AmountMin = *s.AmountMin }},
		{"amountMax", s.AmountMax != nil, func() { o.AmountMax = *s.AmountMax }},
		{"startTime", s.StartTime != nil, func() { o.StartTime = *s.StartTime }},
		{"step", s.Step != nil, func() { o.Step = s.Step.D() }},
		{"outOfOrderness", s.OutOfOrderness != nil, func() { o.OutOfOrderness = s.OutOfOrderness.D() }},
		{"lateEvery", s.LateEvery != nil, func() { o.LateEvery = *s.LateEvery }},
		{"lateBy", s.LateBy != nil, func() { o.LateBy = s.LateBy.D() }},
		{"seed", s.Seed != nil, func() { o.Seed = *s.Seed }},
	} {
		switch {
		case f.set && !on:
			c.Errorf(f.name, "is an option of format: events; set format: events or remove it")
		case f.set:
			f.apply()
		}
	}
	if !on {
		return nil
	}
	ps := o.Problems()
	for _, p := range ps {
		c.Errorf(p.Field, "%s", p.Msg)
	}
	if len(ps) > 0 {
		return nil
	}
	g, _ := NewEvents(o)
	return g
}
