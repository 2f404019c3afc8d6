// Package etcdserver runs embedded etcd members (go.etcd.io/etcd/server/v3)
// on loopback: one for `flinkgo dev etcd`, three for the HA tests. It is a
// development tool: no TLS, no auth, data in a directory of its own.
package etcdserver

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/goleak"
	"go.uber.org/zap"
)

// startTimeout bounds how long a member may take to join its cluster.
const startTimeout = 30 * time.Second

// Config configures a Cluster.
type Config struct {
	// Dir holds each member's data in Dir/<name>; required.
	Dir string
	// Members is the cluster size (default 1).
	Members int
	// ClientPorts are the members' client ports on 127.0.0.1 (default:
	// free ports). Peer ports are always free ports.
	ClientPorts []int
	// Host is the address to listen on (default 127.0.0.1).
	Host string
}

// Cluster is a running embedded etcd cluster. Its methods are safe for
// concurrent use.
type Cluster struct {
	mu      sync.Mutex
	members []*member
	initial string
}

type member struct {
	name       string
	dir        string
	clientURL  url.URL
	peerURL    url.URL
	etcd       *embed.Etcd
	everServed bool
}

// Start starts the members and waits until each has joined.
func Start(c Config) (_ *Cluster, err error) {
	if c.Dir == "" {
		return nil, errors.New("etcdserver: no data directory")
	}
	if c.Members <= 0 {
		c.Members = 1
	}
	if c.Host == "" {
		c.Host = "127.0.0.1"
	}
	if len(c.ClientPorts) != 0 && len(c.ClientPorts) != c.Members {
		return nil, fmt.Errorf("etcdserver: %d client ports for %d members", len(c.ClientPorts), c.Members)
	}
	cl := &Cluster{}
	var initial []string
	for i := range c.Members {
		m := &member{name: fmt.Sprintf("etcd%d", i+1)}
		m.dir = filepath.Join(c.Dir, m.name)
		cp := 0
		if len(c.ClientPorts) > 0 {
			cp = c.ClientPorts[i]
		}
		if m.clientURL, err = hostURL(c.Host, cp); err != nil {
			return nil, err
		}
		if m.peerURL, err = hostURL(c.Host, 0); err != nil {
			return nil, err
		}
		initial = append(initial, m.name+"="+m.peerURL.String())
		cl.members = append(cl.members, m)
	}
	cl.initial = strings.Join(initial, ",")
	defer func() {
		if err != nil {
			cl.Close()
		}
	}()
	// Members of a new cluster wait for each other: start them together.
	errs := make(chan error, len(cl.members))
	for _, m := range cl.members {
		go func() { errs <- cl.startMember(m, embed.ClusterStateFlagNew) }()
	}
	for range cl.members {
		if e := <-errs; e != nil && err == nil {
			err = e
		}
	}
	return cl, err
}

// hostURL is http://host:port, with a free port for 0.
func hostURL(host string, port int) (url.URL, error) {
	if port == 0 {
		ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			return url.URL{}, fmt.Errorf("etcdserver: find a free port: %w", err)
		}
		port = ln.Addr().(*net.TCPAddr).Port
		_ = ln.Close()
	}
	return url.URL{Scheme: "http", Host: net.JoinHostPort(host, fmt.Sprint(port))}, nil
}

func (cl *Cluster) startMember(m *member, state string) error {
	cfg := embed.NewConfig()
	cfg.Name, cfg.Dir = m.name, m.dir
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{m.clientURL}, []url.URL{m.clientURL}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{m.peerURL}, []url.URL{m.peerURL}
	cfg.InitialCluster, cfg.ClusterState = cl.initial, state
	cfg.InitialClusterToken = "flinkgo-dev"
	cfg.LogLevel = "error"
	if err := os.MkdirAll(m.dir, 0o700); err != nil {
		return err
	}
	cfg.LogOutputs = []string{filepath.Join(m.dir, "etcd.log")}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return fmt.Errorf("etcdserver: start member %s: %w", m.name, err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return fmt.Errorf("etcdserver: member %s: %w", m.name, err)
	case <-time.After(startTimeout):
		e.Close()
		return fmt.Errorf("etcdserver: member %s did not join its cluster within %s", m.name, startTimeout)
	}
	cl.mu.Lock()
	m.etcd, m.everServed = e, true
	cl.mu.Unlock()
	return nil
}

// Endpoints are the members' client URLs, for clientv3.Config.Endpoints
// (stopped members included: a client fails over between them).
func (cl *Cluster) Endpoints() []string {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	out := make([]string, len(cl.members))
	for i, m := range cl.members {
		out[i] = m.clientURL.String()
	}
	return out
}

// Size is the number of members.
func (cl *Cluster) Size() int { return len(cl.members) }

// StopMember stops member i (0-based), keeping its data for RestartMember.
func (cl *Cluster) StopMember(i int) {
	cl.mu.Lock()
	m := cl.members[i]
	e := m.etcd
	m.etcd = nil
	cl.mu.Unlock()
	if e != nil {
		e.Close()
	}
}

// RestartMember starts a stopped member again from its data. With other
// members down it may not become ready (no quorum); RestartMembers starts
// several at once.
func (cl *Cluster) RestartMember(i int) error { return cl.RestartMembers(i) }

// RestartMembers starts the stopped members given together, so that
// members that need each other for a quorum can all join.
func (cl *Cluster) RestartMembers(idx ...int) error {
	errs := make(chan error, len(idx))
	for _, i := range idx {
		m := cl.members[i]
		go func() { errs <- cl.startMember(m, embed.ClusterStateFlagExisting) }()
	}
	var err error
	for range idx {
		if e := <-errs; e != nil && err == nil {
			err = e
		}
	}
	return err
}

// Close stops every member.
func (cl *Cluster) Close() {
	for i := range cl.members {
		cl.StopMember(i)
	}
}

// QuietLogger is a zap logger for etcd clients that drops everything (the
// client logs every reconnect at warn level).
func QuietLogger() *zap.Logger { return zap.NewNop() }

// IgnoredGoroutines are goroutines etcd leaves behind, for goleak: its
// members' HTTP clients to each other keep idle keep-alive connections
// that outlive Close until their idle timeout, with their server sides.
func IgnoredGoroutines() []goleak.Option {
	return []goleak.Option{
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreAnyFunction("go.etcd.io/etcd/client/pkg/v3/transport.timeoutConn.Read"),
		goleak.IgnoreAnyFunction("github.com/soheilhy/cmux.(*MuxConn).Read"),
		goleak.IgnoreAnyFunction("net/http.(*conn).serve"),
		goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"),
		goleak.IgnoreAnyFunction("github.com/golang/glog.(*fileSink).flushDaemon"),
	}
}
