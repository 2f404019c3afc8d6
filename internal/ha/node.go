package ha

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"
)

// Host is the daemon a Node works for. The Node calls it from its own
// goroutines, never while holding its lock.
type Host interface {
	// Adopt starts job id, which this daemon now owns, from its record
	// (the latest in etcd): a failover, a drained daemon's job, or one
	// whose owner ended its session.
	Adopt(id string, record []byte)
	// Release stops the local copy of job id at once because this daemon
	// may no longer own it: it must write nothing for it any more (its
	// writes are refused anyway, see Fence and Save).
	Release(id string)
}

// Node is a daemon's membership in an HA cluster: its session, its jobs'
// elections, its view of the cluster, and the decisions taken on it.
type Node struct {
	cfg    Config
	log    zerolog.Logger
	client *clientv3.Client
	keys   keys
	token  string

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	wake   chan struct{}

	mu       sync.Mutex
	host     Host
	ep       *epoch
	view     view
	held     map[string]*claim // jobs this daemon owns
	claiming map[string]bool
	draining bool
	oldLease []clientv3.LeaseID // leases of ended epochs, revoked when etcd answers
}

// claim is an election this daemon won, on the epoch it won it on.
type claim struct {
	el *concurrency.Election
	ep *epoch
}

// Start connects to etcd, opens a session and registers the daemon. It
// refuses a name another live daemon of the cluster uses. Run starts
// taking jobs.
func Start(cfg Config) (*Node, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: cfg.Endpoints, DialTimeout: 5 * time.Second,
		DialKeepAliveTime: cfg.LeaseTTL, DialKeepAliveTimeout: cfg.LeaseTTL, Logger: zap.NewNop()})
	if err != nil {
		return nil, fmt.Errorf("connect to etcd %s: %w", strings.Join(cfg.Endpoints, ","), err)
	}
	n := &Node{cfg: cfg, log: cfg.Log.With().Str("daemon", cfg.Name).Logger(), client: c, keys: newKeys(cfg.ClusterID),
		wake: make(chan struct{}, 1), view: newView(cfg.JobRef), held: map[string]*claim{}, claiming: map[string]bool{}}
	n.ctx, n.cancel = context.WithCancel(context.Background())
	ctx, cancel := context.WithTimeout(n.ctx, 10*time.Second)
	defer cancel()
	if err := n.startEpoch(ctx); err != nil {
		n.cancel()
		_ = c.Close()
		return nil, fmt.Errorf("join HA cluster %q on etcd %s: %w", cfg.ClusterID, strings.Join(cfg.Endpoints, ","), err)
	}
	if n.token, err = n.loadToken(ctx); err != nil {
		n.Close()
		return nil, err
	}
	rev, err := n.list(ctx)
	if err != nil {
		n.Close()
		return nil, err
	}
	n.wg.Add(1)
	go n.watch(rev)
	return n, nil
}

// Name is this daemon's name in the cluster.
func (n *Node) Name() string { return n.cfg.Name }

// Token is the cluster's bearer token: every daemon of the cluster accepts
// it, and forwards requests with it.
func (n *Node) Token() string { return n.token }

// Run starts taking jobs for host: orphaned ones the placement gives this
// daemon. It returns at once.
func (n *Node) Run(host Host) {
	n.mu.Lock()
	n.host = host
	n.mu.Unlock()
	n.wg.Add(1)
	go n.loop()
	n.kick()
}

// Close stops the node and revokes its lease, which ends its membership
// and every election it still holds. Jobs should have ended (Ended) first.
func (n *Node) Close() {
	n.cancel()
	n.wg.Wait()
	n.mu.Lock()
	ep := n.ep
	n.mu.Unlock()
	if ep != nil {
		ep.close(true)
	}
	_ = n.client.Close()
}

func (n *Node) kick() {
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// startEpoch opens a session and registers the member on it.
func (n *Node) startEpoch(ctx context.Context) error {
	ep, err := newEpoch(ctx, n.client, n.cfg.LeaseTTL)
	if err != nil {
		return err
	}
	if err := n.register(ctx, ep); err != nil {
		ep.close(true)
		return err
	}
	n.mu.Lock()
	n.ep = ep
	n.mu.Unlock()
	n.log.Info().Str("lease", fmt.Sprintf("%x", ep.lease())).Dur("ttl", ep.ttl).Msg("joined the HA cluster")
	return nil
}

// register puts the member key on ep's lease unless a live daemon has the
// name; a key left by this daemon's own ended epoch is taken over.
func (n *Node) register(ctx context.Context, ep *epoch) error {
	n.mu.Lock()
	m := Member{Name: n.cfg.Name, Addr: n.cfg.Addr, Draining: n.draining, PID: n.cfg.PID}
	n.mu.Unlock()
	val, _ := json.Marshal(m)
	key := n.keys.member(n.cfg.Name)
	for {
		resp, err := n.client.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
			Then(clientv3.OpPut(key, string(val), clientv3.WithLease(ep.lease()))).Else(clientv3.OpGet(key)).Commit()
		if err != nil {
			return err
		}
		if resp.Succeeded {
			return nil
		}
		kv := resp.Responses[0].GetResponseRange().Kvs[0]
		if !n.ownLease(clientv3.LeaseID(kv.Lease)) {
			return fmt.Errorf("another live daemon of the cluster is named %q (at %s): give each daemon its own rest.address, or wait %s for a crashed one's lease to expire", n.cfg.Name, memberAddr(kv.Value), n.cfg.LeaseTTL)
		}
		if _, err := n.client.Revoke(ctx, clientv3.LeaseID(kv.Lease)); err != nil {
			return err
		}
	}
}

func memberAddr(v []byte) string {
	var m Member
	_ = json.Unmarshal(v, &m)
	return m.Addr
}

func (n *Node) ownLease(id clientv3.LeaseID) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, l := range n.oldLease {
		if l == id {
			return true
		}
	}
	return false
}

func (n *Node) loadToken(ctx context.Context) (string, error) {
	var b [32]byte
	_, _ = rand.Read(b[:])
	key := n.keys.token()
	resp, err := n.client.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, hex.EncodeToString(b[:]))).Else(clientv3.OpGet(key)).Commit()
	if err != nil {
		return "", fmt.Errorf("read the cluster token: %w", err)
	}
	if resp.Succeeded {
		return hex.EncodeToString(b[:]), nil
	}
	return string(resp.Responses[0].GetResponseRange().Kvs[0].Value), nil
}

// list loads the whole view and returns its revision.
func (n *Node) list(ctx context.Context) (int64, error) {
	resp, err := n.client.Get(ctx, n.keys.root, clientv3.WithPrefix())
	if err != nil {
		return 0, fmt.Errorf("read the HA cluster from etcd: %w", err)
	}
	v := newView(n.cfg.JobRef)
	for _, kv := range resp.Kvs {
		v.apply(n.keys, string(kv.Key), kv.Value, kv.CreateRevision)
	}
	n.mu.Lock()
	n.view = v
	n.mu.Unlock()
	n.kick()
	return resp.Header.Revision, nil
}

// watch keeps the view current; after a broken watch it lists again.
func (n *Node) watch(rev int64) {
	defer n.wg.Done()
	for n.ctx.Err() == nil {
		wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(n.ctx))
		for resp := range n.client.Watch(wctx, n.keys.root, clientv3.WithPrefix(), clientv3.WithRev(rev+1)) {
			if resp.Err() != nil {
				break
			}
			n.mu.Lock()
			for _, ev := range resp.Events {
				var val []byte
				if ev.Type == clientv3.EventTypePut {
					val = ev.Kv.Value
				}
				n.view.apply(n.keys, string(ev.Kv.Key), val, ev.Kv.CreateRevision)
			}
			lost := n.lostElections(resp.Header.Revision)
			n.mu.Unlock()
			for _, id := range lost {
				n.release(id, "its etcd election key is gone")
			}
			rev = resp.Header.Revision
			n.kick()
		}
		cancel()
		for n.ctx.Err() == nil {
			lctx, lcancel := context.WithTimeout(n.ctx, n.cfg.LeaseTTL)
			r, err := n.list(lctx)
			lcancel()
			if err == nil {
				rev = r
				break
			}
			sleep(n.ctx, n.cfg.LeaseTTL/4)
		}
	}
}

// lostElections are held jobs whose election key the view, complete up to
// revision rev, no longer has. A key created after rev is not in the view
// yet: it is not lost. Called with n.mu held.
func (n *Node) lostElections(rev int64) []string {
	var out []string
	for id, c := range n.held {
		if _, ok := n.view.owners[id][c.el.Key()]; !ok && rev >= c.el.Rev() {
			out = append(out, id)
		}
	}
	return out
}

// loop ends lost epochs, starts new ones, and takes orphaned jobs.
func (n *Node) loop() {
	defer n.wg.Done()
	tick := time.NewTicker(n.cfg.LeaseTTL / 2)
	defer tick.Stop()
	for {
		n.mu.Lock()
		ep := n.ep
		n.mu.Unlock()
		select {
		case <-n.ctx.Done():
			return
		case <-ep.Done():
			n.endEpoch(ep)
			continue
		case <-n.wake:
		case <-tick.C:
		}
		n.decide()
	}
}

// endEpoch releases every job won on ep, then opens a new session,
// retrying until etcd answers.
func (n *Node) endEpoch(ep *epoch) {
	n.mu.Lock()
	var ids []string
	for id, c := range n.held {
		if c.ep == ep {
			ids = append(ids, id)
		}
	}
	n.oldLease = append(n.oldLease, ep.lease())
	n.mu.Unlock()
	n.log.Warn().Int("jobs", len(ids)).Msg("etcd session lost: stopping this daemon's jobs (another daemon takes them)")
	for _, id := range ids {
		n.release(id, "the etcd session ended")
	}
	ep.close(false)
	for n.ctx.Err() == nil {
		ctx, cancel := context.WithTimeout(n.ctx, n.cfg.LeaseTTL)
		err := n.startEpoch(ctx)
		cancel()
		if err == nil {
			n.revokeOld()
			return
		}
		n.log.Debug().Err(err).Msg("cannot open a new etcd session yet")
		sleep(n.ctx, n.cfg.LeaseTTL/4)
	}
}

// revokeOld revokes the leases of ended epochs, which etcd may still hold
// (a lease outlives a lost quorum), so their elections free at once.
func (n *Node) revokeOld() {
	n.mu.Lock()
	old := n.oldLease
	n.oldLease = nil
	n.mu.Unlock()
	for _, l := range old {
		ctx, cancel := context.WithTimeout(n.ctx, n.cfg.LeaseTTL)
		_, _ = n.client.Revoke(ctx, l)
		cancel()
	}
}

func (n *Node) release(id, why string) {
	n.mu.Lock()
	_, ok := n.held[id]
	delete(n.held, id)
	host := n.host
	n.mu.Unlock()
	if !ok {
		return
	}
	n.log.Warn().Str("job", id).Str("why", why).Msg("lost ownership of a job: stopping it here")
	if host != nil {
		host.Release(id)
	}
}

// decide claims the orphaned jobs the placement gives this daemon.
func (n *Node) decide() {
	n.mu.Lock()
	defer n.mu.Unlock()
	ep := n.ep
	if !ep.Valid() || n.host == nil {
		return
	}
	orphans := n.view.orphans(func(id string) bool { return n.held[id] != nil || n.claiming[id] })
	if len(orphans) == 0 {
		return
	}
	members := n.view.memberList()
	for id, to := range Assign(orphans, members, n.view.owned()) {
		if to != n.cfg.Name {
			continue
		}
		n.claiming[id] = true
		n.wg.Add(1)
		go func() {
			defer n.wg.Done()
			n.take(id, ep)
			n.mu.Lock()
			delete(n.claiming, id)
			n.mu.Unlock()
			n.kick()
		}()
	}
}

// take campaigns for an orphaned job and adopts it when elected.
func (n *Node) take(id string, ep *epoch) {
	el, err := n.campaign(id, ep)
	if err != nil {
		n.log.Debug().Err(err).Str("job", id).Msg("did not win the job's election")
		return
	}
	ctx, cancel := context.WithTimeout(n.ctx, n.cfg.LeaseTTL)
	resp, err := n.client.Get(ctx, n.keys.job(id))
	cancel()
	var j Job
	if err == nil && len(resp.Kvs) == 1 {
		err = json.Unmarshal(resp.Kvs[0].Value, &j)
	}
	if err != nil || !j.Active {
		n.resign(el)
		return
	}
	n.mu.Lock()
	if n.ep != ep || !ep.Valid() {
		n.mu.Unlock()
		return // the epoch ended meanwhile: its lease takes the election with it
	}
	n.held[id] = &claim{el: el, ep: ep}
	host := n.host
	n.mu.Unlock()
	n.log.Info().Str("job", id).Msg("took over a job")
	host.Adopt(id, j.Record)
}

// campaign runs for job id's election on ep's session, giving up after a
// lease TTL (another candidate holds it).
func (n *Node) campaign(id string, ep *epoch) (*concurrency.Election, error) {
	el := concurrency.NewElection(ep.session, n.keys.election(id))
	ctx, cancel := context.WithTimeout(n.ctx, n.cfg.LeaseTTL)
	defer cancel()
	if err := el.Campaign(ctx, n.cfg.Name); err != nil {
		return nil, err
	}
	return el, nil
}

func (n *Node) resign(el *concurrency.Election) {
	ctx, cancel := context.WithTimeout(context.Background(), n.cfg.LeaseTTL)
	defer cancel()
	_ = el.Resign(ctx)
}

// Save writes job id's record, only if this daemon owns the job: one
// transaction guarded by the creation revision of its election key, so a
// daemon whose lease expired (and whose key etcd deleted) writes nothing
// even if it does not know yet. A job this daemon does not hold and etcd
// does not know is new: Save claims it first. The daemon's registry calls
// it for every record write, including the restore point a checkpoint
// waits for (engine.JobOptions.OnRecord): a checkpoint whose pointer
// could not be written is not complete and commits nothing. A write etcd
// applied but whose answer came after the claim was lost returns
// ErrClaimLostInFlight: the checkpoint does not complete here either.
func (n *Node) Save(id string, active bool, requestID string, record []byte) error {
	n.mu.Lock()
	c := n.held[id]
	ep := n.ep
	_, known := n.view.jobs[id]
	n.mu.Unlock()
	if c == nil {
		if known {
			return ErrNotOwner
		}
		el, err := n.campaign(id, ep)
		if err != nil {
			return fmt.Errorf("claim new job %s: %w", id, err)
		}
		c = &claim{el: el, ep: ep}
		n.mu.Lock()
		n.held[id] = c
		n.mu.Unlock()
	}
	if !c.ep.Valid() {
		return ErrFenced
	}
	val, err := json.Marshal(Job{ID: id, Active: active, Writer: n.cfg.Name, RequestID: requestID, Record: record})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(n.ctx, n.cfg.LeaseTTL)
	defer cancel()
	resp, err := n.client.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(c.el.Key()), "=", c.el.Rev())).
		Then(clientv3.OpPut(n.keys.job(id), string(val))).Commit()
	if err != nil {
		return fmt.Errorf("write job %s to etcd: %w", id, err)
	}
	if !resp.Succeeded {
		return ErrNotOwner
	}
	// etcd applied the write under the election, so it was the owner's;
	// but the answer may come after the claim was lost (the request went
	// out just before the process froze). Acting on it now — completing
	// the checkpoint that waits for it — would be a zombie's act.
	if !n.holds(id, c) {
		return ErrClaimLostInFlight
	}
	return nil
}

// Ended tells that job id ended here and its final record is written: the
// daemon resigns its election, so a job that is still active (suspended
// by a drain or a shutdown) goes to another daemon at once.
func (n *Node) Ended(id string) {
	n.mu.Lock()
	c := n.held[id]
	delete(n.held, id)
	n.mu.Unlock()
	if c != nil {
		n.resign(c.el)
	}
	n.kick()
}

// Guard is the check a copy of job id started now writes under
// (Fence(fsys, node.Guard(id))): true while this daemon holds the election
// it holds now, on a lease certainly alive. It is bound to that claim, so
// a copy released when the claim was lost stays fenced even if the daemon
// wins the job again later and starts a new copy.
func (n *Node) Guard(id string) func() bool {
	n.mu.Lock()
	c := n.held[id]
	n.mu.Unlock()
	return func() bool { return c != nil && n.holds(id, c) }
}

// holds reports whether this daemon holds claim c on job id now: it is
// still the job's claim here, on a lease certainly alive.
func (n *Node) holds(id string, c *claim) bool {
	if !c.ep.Valid() {
		return false
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.held[id] == c
}

// Jobs are every job of the cluster, with their owners, by id.
func (n *Node) Jobs() []Job {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]Job, 0, len(n.view.jobs))
	for id, j := range n.view.jobs {
		j.Owner = n.view.owner(id)
		out = append(out, j)
	}
	sort.Slice(out, func(i, k int) bool { return out[i].ID < out[k].ID })
	return out
}

// PID is this daemon's process id as published (Config.PID).
func (n *Node) PID() int { return n.cfg.PID }

// Members are the live daemons, by name.
func (n *Node) Members() []Member {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := n.view.memberList()
	sort.Slice(out, func(i, k int) bool { return out[i].Name < out[k].Name })
	return out
}

// SetDraining marks this daemon as taking no new jobs (or again taking
// them), in its member key.
func (n *Node) SetDraining(on bool) error {
	n.mu.Lock()
	n.draining = on
	ep := n.ep
	n.mu.Unlock()
	val, _ := json.Marshal(Member{Name: n.cfg.Name, Addr: n.cfg.Addr, Draining: on, PID: n.cfg.PID})
	ctx, cancel := context.WithTimeout(n.ctx, n.cfg.LeaseTTL)
	defer cancel()
	_, err := n.client.Put(ctx, n.keys.member(n.cfg.Name), string(val), clientv3.WithLease(ep.lease()))
	return err
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
