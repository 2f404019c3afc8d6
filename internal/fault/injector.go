package fault

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
)

// Action is what a rule does when it fires.
type Action uint8

const (
	// Error makes the operation fail with an *Injected error.
	Error Action = iota + 1
	// Panic panics (a bug in an operator).
	Panic
	// Delay stalls the operation, then lets it go on.
	Delay
	// Exit ends the process at once, running nothing more: a crash at a
	// precise point, like kill -9.
	Exit
)

func (a Action) String() string {
	switch a {
	case Error:
		return "error"
	case Panic:
		return "panic"
	case Delay:
		return "delay"
	case Exit:
		return "exit"
	}
	return fmt.Sprintf("Action(%d)", a)
}

// Rule says when and how a point fails.
type Rule struct {
	Point  string
	Action Action
	// Nth is the first hit that fires (1-based; 0 means 1).
	Nth int
	// Every fires again every so many hits after Nth (0: only Nth).
	Every int
	// Times bounds the firings (0 means 1).
	Times int
	// Match restricts the rule to hits whose attributes, printed, contain it
	// (an operator uid, say).
	Match string
	// Delay is how long Delay stalls.
	Delay time.Duration
}

// ErrInjected is wrapped by every injected error.
var ErrInjected = errors.New("injected fault")

// Injected is the error an Error rule returns.
type Injected struct {
	Point string
	Hit   int
	Attrs []any
}

func (e *Injected) Error() string {
	return fmt.Sprintf("injected fault at %s (hit %d, %v)", e.Point, e.Hit, e.Attrs)
}

func (e *Injected) Unwrap() error { return ErrInjected }

// Injector applies rules; it implements runtime.FaultHook. Safe for
// concurrent use.
type Injector struct {
	mu     sync.Mutex
	rules  []*ruleState
	hits   map[string]int
	fired  map[string]int
	onFire func(point string, a Action, attrs []any)
	exit   func(code int)
}

type ruleState struct {
	Rule
	hits, fired int
}

// New returns an injector with rules; onFire (may be nil) is told of every
// firing before it takes effect.
func New(onFire func(point string, a Action, attrs []any), rules ...Rule) *Injector {
	in := &Injector{hits: map[string]int{}, fired: map[string]int{}, onFire: onFire, exit: os.Exit}
	for _, r := range rules {
		if r.Nth < 1 {
			r.Nth = 1
		}
		if r.Times < 1 {
			r.Times = 1
		}
		in.rules = append(in.rules, &ruleState{Rule: r})
	}
	return in
}

// Fire records a hit of point and applies the first rule that fires.
func (in *Injector) Fire(point string, attrs ...any) error {
	in.mu.Lock()
	in.hits[point]++
	var fire *ruleState
	var hit int
	for _, r := range in.rules {
		if r.Point != point || (r.Match != "" && !strings.Contains(fmt.Sprint(attrs...), r.Match)) {
			continue
		}
		r.hits++
		due := r.hits == r.Nth || (r.Every > 0 && r.hits > r.Nth && (r.hits-r.Nth)%r.Every == 0)
		if fire == nil && due && r.fired < r.Times {
			r.fired++
			fire, hit = r, r.hits
			in.fired[point]++
		}
	}
	in.mu.Unlock()
	if fire == nil {
		return nil
	}
	if in.onFire != nil {
		in.onFire(point, fire.Action, attrs)
	}
	switch fire.Action {
	case Panic:
		panic(fmt.Sprintf("injected panic at %s (hit %d, %v)", point, hit, attrs))
	case Delay:
		time.Sleep(fire.Delay)
		return nil
	case Exit:
		in.exit(137)
		return nil
	}
	return &Injected{Point: point, Hit: hit, Attrs: attrs}
}

// Hits returns how often point was reached.
func (in *Injector) Hits(point string) int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.hits[point]
}

// Fired returns how often a rule fired at point.
func (in *Injector) Fired(point string) int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.fired[point]
}

// Planned returns how many firings the rules allow in all, and how many
// happened: a test checks its faults really fired.
func (in *Injector) Planned() (planned, fired int) {
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, r := range in.rules {
		planned += r.Times
		fired += r.fired
	}
	return planned, fired
}

// Failing returns an injector that fails each named point on its first n
// hits (points maps a point to n): the common shape of connector tests.
func Failing(points map[string]int) *Injector {
	var rules []Rule
	for p, n := range points {
		rules = append(rules, Rule{Point: p, Action: Error, Every: 1, Times: n})
	}
	return New(nil, rules...)
}
