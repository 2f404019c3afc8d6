package ha

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// replyHold is a TCP proxy in front of an etcd endpoint that can hold back
// etcd's answers while requests still reach it: the view of a daemon
// frozen (SIGSTOP) right after sending a request, whose etcd goes on
// without it and whose answer it reads only when it wakes.
type replyHold struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	cond  *sync.Cond
	held  bool
	conns []net.Conn
	wg    sync.WaitGroup
}

func newReplyHold(t *testing.T, endpoint string) *replyHold {
	u, err := url.Parse(endpoint)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &replyHold{ln: ln, target: u.Host}
	p.cond = sync.NewCond(&p.mu)
	p.wg.Add(1)
	go p.accept()
	return p
}

// Endpoint is the proxy's client URL.
func (p *replyHold) Endpoint() string { return "http://" + p.ln.Addr().String() }

// Hold keeps etcd's answers from here on; Release delivers them, in order.
func (p *replyHold) Hold() { p.set(true) }

func (p *replyHold) Release() { p.set(false) }

func (p *replyHold) set(held bool) {
	p.mu.Lock()
	p.held = held
	p.mu.Unlock()
	p.cond.Broadcast()
}

func (p *replyHold) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		p.wg.Add(2)
		go func() { defer p.wg.Done(); _, _ = io.Copy(s, c); _ = s.Close() }()
		go func() { defer p.wg.Done(); p.answers(c, s); _ = c.Close() }()
	}
}

// answers copies etcd's bytes to the client, waiting while they are held.
func (p *replyHold) answers(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			for p.held {
				p.cond.Wait()
			}
			p.mu.Unlock()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *replyHold) Close() {
	_ = p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.Release()
	p.wg.Wait()
}
