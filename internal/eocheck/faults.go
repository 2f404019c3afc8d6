package eocheck

import "fmt"

// Counter reports how many faults were planned and how many fired, like
// *fault.Injector.
type Counter interface {
	Planned() (planned, fired int)
}

// Fired checks that the faults a test planned really happened: an error
// when fewer fired than planned (the test did not test what it claims) or
// more (the counting is wrong).
func Fired(planned, fired int) error {
	switch {
	case fired < planned:
		return fmt.Errorf("only %d of %d planned faults fired", fired, planned)
	case fired > planned:
		return fmt.Errorf("%d faults fired but only %d were planned", fired, planned)
	}
	return nil
}

// FiredAll is Fired with the counts of c.
func FiredAll(c Counter) error { return Fired(c.Planned()) }
