package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// savepoint inspect prints a snapshot's details for people: no Go map
// syntax (map[flink-test/0:9130]).
func TestHuman(t *testing.T) {
	for _, c := range []struct {
		in   any
		want string
	}{
		{map[string]any{"flink-test/1": 12.0, "flink-test/0": 9130.0}, "flink-test/0: 9130, flink-test/1: 12"},
		{map[string]int64{"b": 2, "a": 1}, "a: 1, b: 2"},
		{[]any{1.0, "x"}, "1, x"},
		{map[string]any{"pending": []any{map[string]any{"file": "part-0-1", "size": 10.0}}}, "pending: [{file: part-0-1, size: 10}]"},
		{1.5e9, "1500000000"},
		{map[string]any{}, "none"},
		{nil, "none"},
		{true, "true"},
	} {
		assert.Equal(t, c.want, human(c.in))
	}
}
