package kafkabroker

import (
	"fmt"
	"net"
	"strconv"
	"sync/atomic"
)

// listener is the broker's socket. kfake announces whatever its listener's
// Addr returns as the broker's host:port in metadata, which is what clients
// dial after bootstrapping, so Addr returns the advertised address rather
// than the bound one.
type listener struct {
	net.Listener
	advertised hostPort
}

// listen binds addr (DefaultListen if empty) and works out the address to
// advertise: advertise if given, else the bound address with an unspecified
// host replaced by 127.0.0.1.
func listen(addr, advertise string) (*listener, error) {
	if addr == "" {
		addr = DefaultListen
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, fmt.Errorf("listen address %q: want host:port: %w", addr, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	adv, err := advertisedAddr(ln.Addr(), advertise)
	if err != nil {
		ln.Close()
		return nil, err
	}
	return &listener{Listener: ln, advertised: adv}, nil
}

func advertisedAddr(bound net.Addr, advertise string) (hostPort, error) {
	if advertise != "" {
		host, port, err := net.SplitHostPort(advertise)
		if err != nil || host == "" {
			return "", fmt.Errorf("advertise address %q: want host:port", advertise)
		}
		if p, err := strconv.Atoi(port); err != nil || p <= 0 || p > 65535 {
			return "", fmt.Errorf("advertise address %q: port must be 1-65535", advertise)
		}
		return hostPort(advertise), nil
	}
	tcp, ok := bound.(*net.TCPAddr)
	if !ok {
		return hostPort(bound.String()), nil
	}
	if tcp.IP == nil || tcp.IP.IsUnspecified() {
		return hostPort(net.JoinHostPort("127.0.0.1", strconv.Itoa(tcp.Port))), nil
	}
	return hostPort(tcp.String()), nil
}

// Addr returns the advertised address.
func (l *listener) Addr() net.Addr { return l.advertised }

// listeners are the bound sockets of a cluster's nodes, handed to kfake one
// per node in order.
type listeners struct {
	all    []*listener
	handed atomic.Int32
}

// listenAll binds cfg.Listen for the first node and NodeListen (or free
// loopback ports) for the others; on error nothing stays bound.
func listenAll(cfg Config) (*listeners, error) {
	n := max(cfg.Nodes, 1)
	if len(cfg.NodeListen) > n-1 {
		return nil, fmt.Errorf("%d node addresses for %d nodes", len(cfg.NodeListen), n)
	}
	lns := &listeners{}
	for i := range n {
		addr, adv := cfg.Listen, cfg.Advertise
		if i > 0 {
			addr, adv = "127.0.0.1:0", ""
			if i-1 < len(cfg.NodeListen) {
				addr = cfg.NodeListen[i-1]
			}
		}
		ln, err := listen(addr, adv)
		if err != nil {
			lns.close()
			return nil, err
		}
		lns.all = append(lns.all, ln)
	}
	return lns, nil
}

func (l *listeners) addrs() []string {
	out := make([]string, len(l.all))
	for i, ln := range l.all {
		out[i] = ln.Addr().String()
	}
	return out
}

func (l *listeners) close() {
	for _, ln := range l.all {
		ln.Close()
	}
}

// handOver is the kfake ListenFn: it hands the already bound listeners to
// the nodes in order, ignoring the address kfake asks for (kfake always
// asks for 127.0.0.1).
//
// A node started later (StartNode) gets a new listener on the address
// kfake asks for.
func (l *listeners) handOver(network, address string) (net.Listener, error) {
	i := int(l.handed.Add(1)) - 1
	if i >= len(l.all) {
		ln, err := listen(address, "")
		if err != nil {
			return nil, err
		}
		return ln, nil
	}
	return l.all[i], nil
}

// hostPort is a net.Addr for an advertised "host:port".
type hostPort string

func (hostPort) Network() string  { return "tcp" }
func (a hostPort) String() string { return string(a) }
