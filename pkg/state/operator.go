package state

import "sort"

// Redistribution says how a list of operator state is divided among the
// subtasks of a job restored with a different parallelism.
type Redistribution uint8

const (
	// Split: items are dealt round-robin (each item restored exactly once).
	// Sinks' committables use it.
	Split Redistribution = iota + 1
	// Union: every subtask receives every item and keeps what is its own
	// (sources pick the splits they are assigned).
	Union
)

func (r Redistribution) String() string {
	switch r {
	case Split:
		return "split"
	case Union:
		return "union"
	}
	return "unknown"
}

// ItemList is one named list of operator state.
type ItemList struct {
	Name  string
	Mode  Redistribution
	Items [][]byte
}

// OperatorState is a subtask's operator state: named lists of opaque items
// (a source's positions, a sink's committables). Restored lists are present
// when the operator opens; SnapshotState replaces them with Set. Used only
// from the subtask's goroutine.
type OperatorState struct {
	lists map[string]*ItemList
}

// NewOperatorState returns an empty operator state.
func NewOperatorState() *OperatorState { return &OperatorState{lists: map[string]*ItemList{}} }

// Get returns the items of list name (nil when absent).
func (o *OperatorState) Get(name string) [][]byte {
	if l := o.lists[name]; l != nil {
		return l.Items
	}
	return nil
}

// Set replaces list name.
func (o *OperatorState) Set(name string, mode Redistribution, items [][]byte) {
	o.lists[name] = &ItemList{Name: name, Mode: mode, Items: items}
}

// Lists returns the lists in name order.
func (o *OperatorState) Lists() []*ItemList {
	out := make([]*ItemList, 0, len(o.lists))
	for _, l := range o.lists {
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Empty reports whether there is no list.
func (o *OperatorState) Empty() bool { return len(o.lists) == 0 }
