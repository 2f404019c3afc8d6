package kafkabroker

import (
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
)

func TestAdvertisedAddr(t *testing.T) {
	tcp := func(ip string, port int) net.Addr { return &net.TCPAddr{IP: net.ParseIP(ip), Port: port} }
	tests := []struct {
		name      string
		bound     net.Addr
		advertise string
		want      string
		wantErr   string
	}{
		{"loopback", tcp("127.0.0.1", 9092), "", "127.0.0.1:9092", ""},
		{"ipv4 any", tcp("0.0.0.0", 9092), "", "127.0.0.1:9092", ""},
		{"ipv6 any", tcp("::", 9092), "", "127.0.0.1:9092", ""},
		{"ipv6 loopback", tcp("::1", 9093), "", "[::1]:9093", ""},
		{"explicit", tcp("0.0.0.0", 9092), "kafka.local:19092", "kafka.local:19092", ""},
		{"explicit without host", tcp("0.0.0.0", 9092), ":19092", "", "want host:port"},
		{"explicit without port", tcp("0.0.0.0", 9092), "kafka.local", "", "want host:port"},
		{"explicit port 0", tcp("0.0.0.0", 9092), "kafka.local:0", "", "port must be 1-65535"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := advertisedAddr(tt.bound, tt.advertise)
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got.String())
		})
	}
}

func TestErrorLogKeepsFirstErrors(t *testing.T) {
	var l errorLog
	assert.NoError(t, l.err())
	l.Logf(kfake.LogLevelWarn, "ignored %d", 1)
	assert.NoError(t, l.err())
	for i := range maxLoggedErrors + 2 {
		l.Logf(kfake.LogLevelError, "persist %d", i)
	}
	err := l.err()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "persist 0")
	assert.Contains(t, err.Error(), "persist 9")
	assert.NotContains(t, err.Error(), "persist 10")
	assert.Contains(t, err.Error(), "and 2 more errors")
}
