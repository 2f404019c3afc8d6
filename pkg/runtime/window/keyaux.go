package window

// keyAux is what a sliding window keeps in memory per key, next to its
// panes (state.Map's Aux: found by the same lookup, never snapshotted,
// gone with the key's last pane). All of it is derived from the panes.
type keyAux struct {
	// run is the key's running sliding result (nil: none; see
	// slidingResult): the merge of its panes from..to, for the window
	// ending at end.
	run           *Acc
	end, from, to int64
	// last is the pane starting at lastP, the one the key's last record
	// went to (nil: none): a key's records mostly go to its newest pane,
	// found without a lookup in a key's many panes.
	last  *Acc
	lastP int64
}

// aux returns the current key's keyAux (nil when none).
func (o *operator) aux() *keyAux {
	a, _ := o.panes.Aux().(*keyAux)
	return a
}
