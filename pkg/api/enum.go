package api

import "strings"

// EnumValue reads v as one of values (written in our spelling, such as
// exactly-once), accepting Flink's spellings too (EXACTLY_ONCE): case is
// ignored and '_' reads as '-'. It returns the value in our spelling.
func EnumValue(v string, values ...string) (string, bool) {
	norm := strings.ToLower(strings.ReplaceAll(strings.TrimSpace(v), "_", "-"))
	for _, ok := range values {
		if norm == ok {
			return ok, true
		}
	}
	return "", false
}

// restartAliases are Flink's other names of the restart strategies.
var restartAliases = map[string]string{
	"off": RestartNone, "disable": RestartNone, "no-restart": RestartNone,
	"fixeddelay": RestartFixedDelay, "failurerate": RestartFailureRate, "exponentialdelay": RestartExponentialDelay,
}

// RestartType reads a restart strategy's type in any of Flink's spellings
// (fixed-delay, FIXED_DELAY, fixeddelay, off, …) and returns ours.
func RestartType(v string) (string, bool) {
	if t, ok := EnumValue(v, restartTypes()...); ok {
		return t, true
	}
	t, ok := restartAliases[strings.ToLower(strings.ReplaceAll(strings.TrimSpace(v), "_", "-"))]
	return t, ok
}

// normalizeEnum rewrites *v in our spelling when it is one of values in
// any accepted spelling; otherwise it leaves it for the caller to report.
func normalizeEnum(v *string, values ...string) {
	if s, ok := EnumValue(*v, values...); ok {
		*v = s
	}
}
