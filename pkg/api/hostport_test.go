package api

import (
	"github.com/stretchr/testify/require"
	"testing"
)

func TestHostPortInFlowList(t *testing.T) {
	var out struct {
		Brokers []string `yaml:"brokers"`
	}
	d := NewDecoder("x.yaml")
	n := d.ParseYAML([]byte("{brokers: [localhost:9092, 127.0.0.1:9093]}"))
	d.Decode(n, "", &out)
	require.NoError(t, d.Errors.Err())
	require.Equal(t, []string{"localhost:9092", "127.0.0.1:9093"}, out.Brokers)
}
