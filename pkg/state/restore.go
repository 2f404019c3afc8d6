package state

// RestoreOperatorState assembles the operator state of new subtask `subtask`
// (of `parallelism`) from the snapshots of all old subtasks of the same
// operator, indexed by old subtask (nil entries are subtasks without state).
//
// With unchanged parallelism every subtask gets its own lists back. Otherwise
// Split lists are dealt round-robin over the concatenation of the old lists
// and Union lists are given whole to every subtask.
func RestoreOperatorState(old []*Snapshot, subtask, parallelism int) *OperatorState {
	o := NewOperatorState()
	if len(old) == parallelism {
		if s := old[subtask]; s != nil {
			for _, l := range s.lists {
				if l.Mode != Union {
					o.Set(l.Name, l.Mode, l.Items)
				}
			}
		}
	}
	type acc struct {
		mode  Redistribution
		items [][]byte
	}
	all := map[string]*acc{}
	var order []string
	for _, s := range old {
		if s == nil {
			continue
		}
		for _, l := range s.lists {
			a := all[l.Name]
			if a == nil {
				a = &acc{mode: l.Mode}
				all[l.Name] = a
				order = append(order, l.Name)
			}
			a.items = append(a.items, l.Items...)
		}
	}
	for _, name := range order {
		a := all[name]
		switch {
		case a.mode == Union:
			o.Set(name, Union, a.items)
		case len(old) != parallelism:
			var mine [][]byte
			for i := subtask; i < len(a.items); i += parallelism {
				mine = append(mine, a.items[i])
			}
			o.Set(name, a.mode, mine)
		}
	}
	return o
}

// Restore loads, from the snapshots of the old subtasks, the key groups this
// backend owns. Snapshots whose range does not overlap are skipped.
func (b *KeyedBackend) Restore(old []*Snapshot) {
	for _, s := range old {
		if s == nil || !s.keyed || !s.rng.Overlaps(b.rng) {
			continue
		}
		for _, t := range s.tables {
			b.restoreRaw(t)
		}
	}
}
