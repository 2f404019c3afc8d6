package dashboard

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
)

// HostPolicy decides which Host headers the TCP listener answers. A page of
// another site can make the browser resolve its own name to 127.0.0.1 (DNS
// rebinding) and then read the dashboard as same-origin; it cannot make the
// browser send this daemon's address as Host. So only these are accepted,
// always with the listener's port:
//   - an IP literal: the one listened on, or any when listening on all
//     interfaces (a literal cannot be rebound);
//   - "localhost" when listening on loopback or all interfaces;
//   - names listed in rest.allowed-hosts.
type HostPolicy struct {
	ip    net.IP // nil or unspecified: all interfaces
	port  string
	names []string // lower case
}

// NewHostPolicy builds the policy for a listener address ("127.0.0.1:8081").
func NewHostPolicy(listen string, allowed []string) (*HostPolicy, error) {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return nil, err
	}
	p := &HostPolicy{port: port}
	if host != "" {
		p.ip = net.ParseIP(host)
	}
	for _, n := range allowed {
		p.names = append(p.names, strings.ToLower(strings.TrimSpace(n)))
	}
	return p, nil
}

// Allowed reports whether a request's Host header names this daemon.
func (p *HostPolicy) Allowed(hostport string) bool {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = hostport, "80"
	}
	if port != p.port {
		return false
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if slices.Contains(p.names, host) {
		return true
	}
	all := p.ip == nil || p.ip.IsUnspecified()
	if ip := net.ParseIP(strings.Trim(host, "[]")); ip != nil {
		return all || ip.Equal(p.ip) || (ip.IsLoopback() && p.ip.IsLoopback())
	}
	return host == "localhost" && (all || p.ip.IsLoopback())
}

// Wrap refuses requests whose Host the policy does not accept.
func (p *HostPolicy) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !p.Allowed(r.Host) {
			w.Header().Set("Connection", "close") // answer now, unread body or not
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusMisdirectedRequest)
			_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{
				"code": "usage",
				"message": fmt.Sprintf("Host %q is not an address of this daemon; open it by its address, or add the name to rest.allowed-hosts in the daemon config",
					r.Host)}})
			return
		}
		next.ServeHTTP(w, r)
	})
}
