package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/flinkgo/flinkgo/pkg/runtime"
	"github.com/flinkgo/flinkgo/pkg/state"
)

// Prepared transactions are named (their gid) <prefix>-<subtask>-<checkpoint>:
// the prefix is the job's and the sink's (transactionPrefix, by default
// flinkgo-<job id>-<uid>), so a restore finds every prepared transaction
// its sink left in pg_prepared_xacts, whichever attempt or daemon
// prepared it.

// gid names the transaction subtask prepares for checkpoint id.
func gid(prefix string, subtask int, id int64) string {
	return prefix + "-" + strconv.Itoa(subtask) + "-" + strconv.FormatInt(id, 10)
}

// parseGID reads a gid of prefix: the subtask and checkpoint, ok false for
// a gid of another prefix (one that merely starts with this one, such as
// prefix-1's for prefix, does not parse).
func parseGID(prefix, g string) (subtask int, id int64, ok bool) {
	rest, found := strings.CutPrefix(g, prefix+"-")
	if !found {
		return 0, 0, false
	}
	s, c, found := strings.Cut(rest, "-")
	if !found {
		return 0, 0, false
	}
	st, err1 := strconv.Atoi(s)
	cp, err2 := strconv.ParseInt(c, 10, 64)
	if err1 != nil || err2 != nil || st < 0 || cp < 0 || strconv.Itoa(st) != s || strconv.FormatInt(cp, 10) != c {
		return 0, 0, false
	}
	return st, cp, true
}

// defaultPrefix is unique per job and sink and stable across the job's
// restarts and recoveries (a job restored with run -s is a new job: it
// takes over the prefixes its snapshot names).
func defaultPrefix(jobID, uid string) string {
	p := "flinkgo-" + jobID + "-" + uid
	if len(p) > maxPrefix || !prefixChars.MatchString(p) {
		// A uid may hold characters a gid should not (or be long):
		// keep the job id and a hash of the uid.
		p = fmt.Sprintf("flinkgo-%s-%08x", jobID, fnv32(uid))
	}
	return p
}

func fnv32(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

// prepared is a transaction prepared at a barrier, waiting for its
// checkpoint to complete.
type prepared struct {
	GID        string `json:"gid"`
	Checkpoint int64  `json:"checkpoint"`
	Rows       int64  `json:"rows"`
}

// subtaskState is one subtask's item of the union list: its prefix and
// the transactions it prepared and had not committed at the snapshot.
type subtaskState struct {
	Version int        `json:"v"`
	Prefix  string     `json:"prefix"`
	Subtask int        `json:"subtask"`
	Pending []prepared `json:"pending"`
}

// stateList names the union list in the operator state: every subtask
// sees every item at a restore (the prepared transactions of a subtask
// that no longer exists after a rescale are committed by another).
const stateList = "postgres-transactions"

func putState(st *state.OperatorState, s subtaskState) {
	b, _ := json.Marshal(s)
	st.Set(stateList, state.Union, [][]byte{b})
}

// restoredState decodes the union list (nil without one).
func restoredState(st *state.OperatorState) ([]subtaskState, error) {
	items := st.Get(stateList)
	out := make([]subtaskState, 0, len(items))
	for _, it := range items {
		var s subtaskState
		if err := json.Unmarshal(it, &s); err != nil || s.Version != 1 || s.Prefix == "" {
			return nil, fmt.Errorf("postgres sink: restored state item %q is not this sink's (version 1 expected): %v", truncate(it), err)
		}
		out = append(out, s)
	}
	return out, nil
}

func truncate(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "…"
	}
	return string(b)
}

// ownersTable holds each prefix's owner (runtime.OutputOwner as JSON), in
// the sink's database: the rule of pkg/runtime/owner.go applied to
// transaction prefixes instead of directories.
const ownersTable = "flinkgo_sink_owners"

// claim makes c the owner of prefix, or refuses (runtime.ErrOutputOwned,
// no restart) when another job that may still run owns it. idle: no
// prepared transaction of the prefix exists, so a job known to have ended
// may be taken over (it left nothing that a restore of its snapshots would
// commit). The check and the write are one transaction holding the
// owner's row lock, so two claimants cannot both pass.
func claim(ctx context.Context, conn *pgx.Conn, prefix string, idle bool, c runtime.OutputClaim) error {
	_, err := conn.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+ownersTable+" (prefix text PRIMARY KEY, owner jsonb NOT NULL)")
	switch code := sqlState(err); {
	case code == codeDuplicateTable || code == codeUniqueViolation:
		// another subtask created it at the same time
	case code == codeInsufficientPriv:
		return runtime.SuppressRestarts(fmt.Errorf("postgres sink: may not create the table %s that records which job owns each transaction prefix (%v): create it once as a privileged user (CREATE TABLE %s (prefix text PRIMARY KEY, owner jsonb NOT NULL)) and GRANT SELECT, INSERT, UPDATE ON it",
			ownersTable, err, ownersTable))
	case err != nil:
		return fmt.Errorf("postgres sink: create %s: %w", ownersTable, err)
	}
	what := fmt.Sprintf("prepared transactions %s-* (marker: %s row %q)", prefix, ownersTable, prefix)
	for range 3 {
		done, err := claimOnce(ctx, conn, prefix, what, idle, c)
		if err != nil || done {
			return err
		}
	}
	return fmt.Errorf("claim %s: its owner keeps changing", what)
}

func claimOnce(ctx context.Context, conn *pgx.Conn, prefix, what string, idle bool, c runtime.OutputClaim) (done bool, err error) {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return false, err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	var raw []byte
	err = tx.QueryRow(ctx, "SELECT owner FROM "+ownersTable+" WHERE prefix = $1 FOR UPDATE", prefix).Scan(&raw)
	var owner *runtime.OutputOwner
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return false, fmt.Errorf("read the owner of %s: %w", what, err)
	default:
		owner = &runtime.OutputOwner{}
		if err := json.Unmarshal(raw, owner); err != nil || owner.Job == "" {
			return false, fmt.Errorf("%s row %q holds no flinkgo owner (%q): delete the row if no job writes with these transactions", ownersTable, prefix, raw)
		}
	}
	// Without an owner the prefix is free: prepared transactions of it
	// that no job claimed are orphans whatever made them (a sink claims
	// its prefix before it prepares anything).
	if err := c.Check(what, owner, idle || owner == nil); err != nil {
		return false, ownedError(what, owner, err)
	}
	if owner != nil && owner.Job == c.Job {
		return true, nil
	}
	me, _ := json.Marshal(runtime.OutputOwner{Version: 1, Job: c.Job, JobName: c.JobName, Operator: c.Operator, Since: time.Now().UTC()})
	var tag string
	if owner == nil {
		ct, err := tx.Exec(ctx, "INSERT INTO "+ownersTable+" (prefix, owner) VALUES ($1, $2) ON CONFLICT DO NOTHING", prefix, me)
		if err != nil {
			return false, fmt.Errorf("claim %s: %w", what, err)
		}
		if ct.RowsAffected() == 0 {
			return false, nil // another claimant inserted first: read its row
		}
		tag = "claimed"
	} else {
		if _, err := tx.Exec(ctx, "UPDATE "+ownersTable+" SET owner = $2 WHERE prefix = $1", prefix, me); err != nil {
			return false, fmt.Errorf("claim %s: %w", what, err)
		}
		tag = "taken over"
	}
	if err := tx.Commit(ctx); err != nil {
		return false, fmt.Errorf("claim %s (%s): %w", what, tag, err)
	}
	return true, nil
}

// ownedError words a refusal.
func ownedError(what string, owner *runtime.OutputOwner, err error) error {
	if owner == nil {
		return runtime.SuppressRestarts(err)
	}
	return runtime.SuppressRestarts(fmt.Errorf("%w: %s belong to job %s (%q, operator %q, since %s): two jobs writing on from one snapshot would both commit its rows after it (duplicates), and each would roll back the other's prepared transactions. "+
		"Cancel that job, or restore a savepoint of it with `flinkgo run -s`; give this sink another transactionPrefix; or pass --allow-non-empty-output to take them over anyway",
		runtime.ErrOutputOwned, what, owner.Job, owner.JobName, owner.Operator, owner.Since.Format(time.RFC3339)))
}

// preparedGIDs lists the prepared transactions of this database whose
// gid starts with one of prefixes.
func preparedGIDs(ctx context.Context, conn *pgx.Conn, prefixes []string) ([]string, error) {
	rows, err := conn.Query(ctx, "SELECT gid FROM pg_prepared_xacts WHERE database = current_database()")
	if err != nil {
		return nil, fmt.Errorf("list the prepared transactions: %w", err)
	}
	gids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("list the prepared transactions: %w", err)
	}
	var out []string
	for _, g := range gids {
		for _, p := range prefixes {
			if _, _, ok := parseGID(p, g); ok {
				out = append(out, g)
				break
			}
		}
	}
	return out, nil
}

// finish runs COMMIT PREPARED (commit) or ROLLBACK PREPARED of g. A gid
// Postgres no longer knows was finished before (committed by an earlier
// attempt or another subtask that restored the same snapshot): known
// false, no error.
func finish(ctx context.Context, conn *pgx.Conn, g string, commit bool) (known bool, err error) {
	verb := "ROLLBACK PREPARED "
	if commit {
		verb = "COMMIT PREPARED "
	}
	_, err = conn.Exec(ctx, verb+quoteLiteral(g))
	if sqlState(err) == codeUndefinedObject {
		return false, nil
	}
	if err != nil {
		return true, fmt.Errorf("%s%s: %w", verb, g, err)
	}
	return true, nil
}

// quoteLiteral quotes s as a SQL string literal (gids are made of
// prefixChars, digits and '-', but a restored prefix is read from state).
func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
