package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/flinkgo/flinkgo/pkg/api"
)

// Config is the daemon's configuration.
type Config struct {
	Home           string
	File           string // the config file read ("" when none)
	RestAddress    string
	CheckpointsDir string
	SavepointsDir  string
	LogLevel       string
	// IdleTimeout closes idle keep-alive connections of the control API.
	IdleTimeout time.Duration
	// Umask is the daemon process's umask (daemon.umask).
	Umask int
	// JobOutMaxSize caps a job's job.out before it is rotated.
	JobOutMaxSize int64
	// AllowedHosts are extra Host names the TCP listener answers to.
	AllowedHosts []string
	// AllowedPaths bounds the paths the control API accepts (empty: any).
	AllowedPaths []string
	// ShutdownSavepointTimeout bounds the stop-with-savepoint of each job
	// on daemon shutdown.
	ShutdownSavepointTimeout time.Duration
	// JobStoreMaxCapacity caps the ended jobs the daemon keeps (in memory
	// and in its registry), oldest ended dropped first (jobstore.max-capacity).
	JobStoreMaxCapacity int
	// SubmitRateLimit is how many submissions per second one client may
	// send (rest.submit-rate-limit; 0: no limit).
	SubmitRateLimit int
	// GCHeapFloor is the daemon's garbage-collection heap floor in bytes
	// (daemon.gc-heap-floor; 0: none).
	GCHeapFloor int64
	// StateBackend is the jobs' default state backend (state.backend.type:
	// api.BackendHashMap or api.BackendPebble); a job's stateBackend wins.
	StateBackend string
	// StateIncremental is state.backend.incremental: pebble jobs take
	// incremental checkpoints unless their spec says otherwise.
	StateIncremental bool
	// PebbleLocalDir is where pebble jobs keep their working state
	// (state.backend.pebble.localdir; default $FLINKGO_HOME/pebble).
	PebbleLocalDir string
	// Defaults of jobs' checkpointing and restart strategy; unset fields
	// fall back to Flink's defaults (api.ResolveCheckpointing/Restart).
	Checkpointing api.CheckpointSpec
	Restart       api.RestartDefaults
	// HA is high-availability mode (high-availability.*).
	HA HA
	// S3 configures s3:// paths (s3.*).
	S3 S3
}

// HA configures high-availability mode.
type HA struct {
	// Type is "" (one daemon) or "etcd".
	Type       string
	Endpoints  []string
	StorageDir string
	ClusterID  string
	LeaseTTL   time.Duration
}

// DefaultHome is $FLINKGO_HOME, or ~/.flinkgo.
func DefaultHome() string {
	if h := os.Getenv("FLINKGO_HOME"); h != "" {
		return h
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ".flinkgo"
	}
	return filepath.Join(home, ".flinkgo")
}

// EnvName is the environment variable that sets key.
func EnvName(key string) string {
	return "FLINKGO_" + strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(key))
}

// Load reads the configuration. file is --config ("" for
// $home/flinkgo.yaml, which may be absent); flags maps keys to the command's
// flags that override them (only flags the user changed count). Every
// problem is reported at once, naming the key and where its value came from.
func Load(home, file string, flags map[string]*pflag.Flag) (*Config, error) {
	c := &Config{Home: home, RestAddress: "127.0.0.1:8081", LogLevel: "info", ShutdownSavepointTimeout: 10 * time.Second,
		IdleTimeout: time.Minute, Umask: 0o077, JobOutMaxSize: 16 << 20, S3: DefaultS3,
		JobStoreMaxCapacity: 1000, SubmitRateLimit: 50, StateBackend: api.BackendHashMap,
		HA: HA{ClusterID: "default", LeaseTTL: 10 * time.Second}}
	explicit := file != ""
	if file == "" {
		file = filepath.Join(home, "flinkgo.yaml")
	}
	v := viper.New()
	v.AllowEmptyEnv(true) // FLINKGO_REST_ADDRESS= disables the listener
	var errs api.SpecError
	positions := map[string]api.Pos{}
	data, err := os.ReadFile(file)
	switch {
	case err == nil:
		c.File = file
		values, perr := parseFile(file, data, positions)
		if perr != nil {
			return nil, perr
		}
		if err := v.MergeConfigMap(values); err != nil {
			return nil, fmt.Errorf("config %s: %w", file, err)
		}
	case errors.Is(err, fs.ErrNotExist) && !explicit:
	default:
		return nil, api.Errorf(api.CodeInvalid, "config file: %v", err)
	}
	for _, k := range keys {
		_ = v.BindEnv(k.name, EnvName(k.name))
		if f, ok := flags[k.name]; ok && f != nil && f.Changed {
			_ = v.BindPFlag(k.name, f)
		}
	}
	for _, k := range keys {
		if !v.IsSet(k.name) {
			continue
		}
		if err := k.set(c, v.GetString(k.name)); err != nil {
			fe := api.FieldError{Field: k.name, Msg: err.Error()}
			switch {
			case flags[k.name] != nil && flags[k.name].Changed:
				fe.Msg += fmt.Sprintf(" (from flag --%s)", flags[k.name].Name)
			case os.Getenv(EnvName(k.name)) != "":
				fe.Msg += fmt.Sprintf(" (from environment variable %s)", EnvName(k.name))
			default:
				fe.File, fe.Pos = file, positions[k.name]
			}
			errs.Errors = append(errs.Errors, fe)
		}
	}
	errs.Errors = append(errs.Errors, c.HA.check(c, file, positions)...)
	if c.CheckpointsDir == "" {
		c.CheckpointsDir = filepath.Join(home, "checkpoints")
	}
	if c.PebbleLocalDir == "" {
		c.PebbleLocalDir = filepath.Join(home, "pebble")
	}
	if c.SavepointsDir == "" {
		// The one default of savepoint, stop and the shutdown savepoints.
		c.SavepointsDir = filepath.Join(home, "savepoints")
	}
	d := api.NewDecoder(file)
	api.ValidateCheckpointSpec(d, "execution.checkpointing", &c.Checkpointing)
	for _, typ := range api.SortedKeys(c.Restart.Options) {
		api.ValidateRestartSpec(d, "restart-strategy."+typ, c.Restart.Options[typ])
	}
	for _, fe := range d.Errors.Errors {
		errs.Errors = append(errs.Errors, asConfigError(fe, file, positions))
	}
	if err := errs.Err(); err != nil {
		return nil, api.Invalid(err)
	}
	return c, nil
}

// parseFile flattens the YAML file into dotted keys (Flink's config.yaml
// accepts both nested maps and flat "a.b.c" keys), rejecting unknown keys
// with their line, and returns a nested map for viper.
func parseFile(file string, data []byte, positions map[string]api.Pos) (map[string]any, error) {
	if d := api.NewDecoder(file); !d.CheckBounds(data) {
		return nil, api.Invalid(d.Errors.Err())
	}
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		d := api.NewDecoder(file)
		d.ParseYAML(data)
		return nil, api.Invalid(d.Errors.Err())
	}
	flat := map[string]string{}
	var errs api.SpecError
	for _, doc := range f.Docs {
		if doc.Body == nil {
			continue
		}
		flatten(doc.Body, "", func(k string, keyNode, n ast.Node) {
			pos := nodePos(n)
			positions[k] = pos
			if _, ok := lookupKey(k); !ok {
				pos = nodePos(keyNode)
				msg := fmt.Sprintf("unknown configuration key %q", k)
				if h := s3CredentialHint(k); h != "" {
					msg += h
				} else if s := api.Closest(k, keyNames()); s != "" {
					msg += fmt.Sprintf("; did you mean %q?", s)
				} else {
					msg += " (configs/flinkgo.yaml lists every key)"
				}
				errs.Errors = append(errs.Errors, api.FieldError{File: file, Pos: pos, Field: k, Msg: msg})
				return
			}
			s, ok := scalar(n)
			if items, isList := listValue(n); isList && listKeys[k] {
				s, ok = strings.Join(items, ","), true
			}
			if !ok {
				errs.Errors = append(errs.Errors, api.FieldError{File: file, Pos: pos, Field: k, Msg: "expected a single value, not a list"})
				return
			}
			flat[k] = s
		}, &errs, file)
	}
	if err := errs.Err(); err != nil {
		return nil, api.Invalid(err)
	}
	nested := map[string]any{}
	for k, val := range flat {
		parts := strings.Split(k, ".")
		m := nested
		for _, p := range parts[:len(parts)-1] {
			sub, ok := m[p].(map[string]any)
			if !ok {
				sub = map[string]any{}
				m[p] = sub
			}
			m = sub
		}
		m[parts[len(parts)-1]] = val
	}
	return nested, nil
}

func flatten(n ast.Node, prefix string, leaf func(key string, keyNode, value ast.Node), errs *api.SpecError, file string) {
	var values []*ast.MappingValueNode
	switch m := n.(type) {
	case *ast.MappingNode:
		values = m.Values
	case *ast.MappingValueNode:
		values = []*ast.MappingValueNode{m}
	case *ast.NullNode, *ast.CommentGroupNode:
		return
	default:
		if prefix == "" {
			errs.Errors = append(errs.Errors, api.FieldError{File: file, Pos: nodePos(n), Msg: "the config file must be a mapping of keys to values"})
			return
		}
		leaf(prefix, n, n)
		return
	}
	for _, kv := range values {
		k := kv.Key.GetToken().Value
		if prefix != "" {
			k = prefix + "." + k
		}
		switch kv.Value.(type) {
		case *ast.MappingNode, *ast.MappingValueNode:
			flatten(kv.Value, k, leaf, errs, file)
		default:
			leaf(k, kv.Key, kv.Value)
		}
	}
}

// listValue is the items of a YAML list of scalars (isList false: n is no
// such list), for a list-valued key (listKeys).
func listValue(n ast.Node) (items []string, isList bool) {
	seq, ok := n.(*ast.SequenceNode)
	if !ok {
		return nil, false
	}
	for _, v := range seq.Values {
		s, ok := scalar(v)
		if !ok {
			return nil, false
		}
		items = append(items, s)
	}
	return items, true
}

func scalar(n ast.Node) (string, bool) {
	switch t := n.(type) {
	case *ast.NullNode:
		return "", true
	case *ast.StringNode:
		return t.Value, true
	case *ast.SequenceNode, *ast.MappingNode:
		return "", false
	}
	return n.GetToken().Value, true
}

func nodePos(n ast.Node) api.Pos {
	if n == nil || n.GetToken() == nil || n.GetToken().Position == nil {
		return api.Pos{}
	}
	p := n.GetToken().Position
	return api.Pos{Line: p.Line, Column: p.Column}
}

// specToKey maps the job-spec names that api's validators use to the config
// keys they come from, so a config error names what the user wrote.
var specToKey = map[string]string{
	"execution.checkpointing.interval":                  "execution.checkpointing.interval",
	"execution.checkpointing.mode":                      "execution.checkpointing.mode",
	"execution.checkpointing.timeout":                   "execution.checkpointing.timeout",
	"execution.checkpointing.minPause":                  "execution.checkpointing.min-pause",
	"execution.checkpointing.maxConcurrent":             "execution.checkpointing.max-concurrent-checkpoints",
	"execution.checkpointing.tolerableFailures":         "execution.checkpointing.tolerable-failed-checkpoints",
	"execution.checkpointing.externalized":              "execution.checkpointing.externalized-checkpoint-retention",
	"execution.checkpointing.retained":                  "execution.checkpointing.num-retained",
	"restart-strategy.fixed-delay.attempts":             "restart-strategy.fixed-delay.attempts",
	"restart-strategy.fixed-delay.delay":                "restart-strategy.fixed-delay.delay",
	"restart-strategy.exponential-delay.attempts":       "restart-strategy.exponential-delay.attempts-before-reset-backoff",
	"restart-strategy.exponential-delay.initialBackoff": "restart-strategy.exponential-delay.initial-backoff",
	"restart-strategy.exponential-delay.maxBackoff":     "restart-strategy.exponential-delay.max-backoff",
	"restart-strategy.exponential-delay.multiplier":     "restart-strategy.exponential-delay.backoff-multiplier",
	"restart-strategy.exponential-delay.jitter":         "restart-strategy.exponential-delay.jitter-factor",
	"restart-strategy.exponential-delay.resetThreshold": "restart-strategy.exponential-delay.reset-backoff-threshold",
	"restart-strategy.failure-rate.maxFailures":         "restart-strategy.failure-rate.max-failures-per-interval",
	"restart-strategy.failure-rate.interval":            "restart-strategy.failure-rate.failure-rate-interval",
	"restart-strategy.failure-rate.delay":               "restart-strategy.failure-rate.delay",
}

// asConfigError rewrites a validator's error in config terms: the key as
// written in the file, its line, and the other keys a message mentions.
func asConfigError(fe api.FieldError, file string, positions map[string]api.Pos) api.FieldError {
	prefix := fe.Field[:strings.LastIndex(fe.Field, ".")+1]
	if key, ok := specToKey[fe.Field]; ok {
		fe.Field = key
	}
	for spec, key := range specToKey {
		if strings.HasPrefix(spec, prefix) {
			short := strings.TrimPrefix(spec, prefix)
			fe.Msg = replaceWord(fe.Msg, short, key)
		}
	}
	fe.File = file
	if pos, ok := positions[fe.Field]; ok {
		fe.Pos = pos
	}
	return fe
}

// replaceWord replaces whole-word occurrences of old in s.
func replaceWord(s, old, repl string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, old)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		end := i + len(old)
		before := i == 0 || !isWordByte(s[i-1])
		after := end == len(s) || !isWordByte(s[end])
		b.WriteString(s[:i])
		if before && after {
			b.WriteString(repl)
		} else {
			b.WriteString(old)
		}
		s = s[end:]
	}
}

func isWordByte(c byte) bool {
	return c == '_' || c == '-' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
