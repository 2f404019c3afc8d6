package fault

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// EnvVar names the environment variable from which the daemon reads fault
// rules: for tests only.
const EnvVar = "FLINKGO_FAULTS"

// Parse reads rules written as `point:action[,key=value...]`, separated by
// semicolons, for example
//
//	file.commit:exit,nth=3; kafka.poll:error,every=500,times=4,match=source
//
// keys: nth, every, times, match, delay (for action delay).
func Parse(spec string) ([]Rule, error) {
	var rules []Rule
	for _, part := range strings.Split(spec, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		fields := strings.Split(part, ",")
		head := strings.SplitN(fields[0], ":", 2)
		if len(head) != 2 {
			return nil, fmt.Errorf("fault rule %q: want point:action", part)
		}
		r := Rule{Point: strings.TrimSpace(head[0])}
		if !Known(r.Point) {
			return nil, fmt.Errorf("fault rule %q: unknown point %q", part, r.Point)
		}
		switch strings.TrimSpace(head[1]) {
		case "error":
			r.Action = Error
		case "panic":
			r.Action = Panic
		case "delay":
			r.Action = Delay
		case "exit":
			r.Action = Exit
		default:
			return nil, fmt.Errorf("fault rule %q: action must be error, panic, delay or exit", part)
		}
		for _, kv := range fields[1:] {
			k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
			if !ok {
				return nil, fmt.Errorf("fault rule %q: %q is not key=value", part, kv)
			}
			var err error
			switch k {
			case "nth":
				r.Nth, err = strconv.Atoi(v)
			case "every":
				r.Every, err = strconv.Atoi(v)
			case "times":
				r.Times, err = strconv.Atoi(v)
			case "match":
				r.Match = v
			case "delay":
				r.Delay, err = time.ParseDuration(v)
			default:
				err = fmt.Errorf("unknown key %q (nth, every, times, match, delay)", k)
			}
			if err != nil {
				return nil, fmt.Errorf("fault rule %q: %s: %v", part, k, err)
			}
		}
		rules = append(rules, r)
	}
	return rules, nil
}
