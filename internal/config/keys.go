// Package config loads the daemon's configuration: defaults, then the YAML
// file ($FLINKGO_HOME/flinkgo.yaml or --config), then FLINKGO_* environment
// variables, then flags. Keys are named as in Flink where Flink has them.
// viper lives here (and in the CLI) only; packages receive the plain Config.
package config

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/flinkgo/flinkgo/pkg/api"
	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// key describes one configuration key.
type key struct {
	name string
	def  string // default, in the form a user writes it ("" for none)
	doc  string
	set  func(c *Config, v string) error
}

// listKeys are the keys whose value is a list (listKey).
var listKeys = map[string]bool{}

// listKey is a key whose value is a list: a YAML list, one string or a
// comma-separated string (in the file, a flag or an environment
// variable), split by api.SplitList, the spec's rule for list-valued keys.
func listKey(name, doc string, set func(c *Config, items []string) error) key {
	listKeys[name] = true
	return key{name, "", doc + "; a list, or one comma-separated string", func(c *Config, v string) error {
		return set(c, api.SplitList(v))
	}}
}

// keys lists every key the config file accepts. configs/flinkgo.yaml
// documents each of them (a test checks it). The s3.* keys are in s3.go.
var keys = append([]key{
	{"rest.address", "127.0.0.1:8081", "TCP address of the REST API and /metrics; empty disables it", func(c *Config, v string) error { c.RestAddress = v; return nil }},
	listKey("rest.allowed-hosts", "extra host names the REST API and dashboard answer to (its own IP address and localhost always work; other names are refused against DNS rebinding)", func(c *Config, hosts []string) error {
		c.AllowedHosts = nil
		for _, h := range hosts {
			if strings.ContainsAny(h, ":/ ") {
				return fmt.Errorf("%q is not a host name (give the name only, without port or scheme)", h)
			}
			c.AllowedHosts = append(c.AllowedHosts, h)
		}
		return nil
	}),
	{"rest.idleness-timeout", "1min", "an idle keep-alive connection to the REST API (or the socket) is closed after this", func(c *Config, v string) error {
		d, err := api.ParseDuration(v)
		if err != nil {
			return err
		}
		if d <= 0 {
			return fmt.Errorf("must be positive, got %s", d)
		}
		c.IdleTimeout = d.D()
		return nil
	}},
	{"rest.submit-rate-limit", "50", "job submissions per second one client may send (its address; every client of the local socket counts as one), with bursts of twice that; more are refused until it slows down; 0: no limit", nonNegativeInt(func(c *Config) *int { return &c.SubmitRateLimit })},
	{"jobstore.max-capacity", "1000", "ended jobs (finished, canceled, failed) the daemon keeps for list, info and the dashboard, in memory and in its registry; past it the oldest ended job is dropped", func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("must be a whole number of at least 1, got %q", v)
		}
		c.JobStoreMaxCapacity = n
		return nil
	}},
	{"state.checkpoints.dir", "", "where checkpoints go (<dir>/<job-id>/chk-<n>), a local directory or s3://bucket/prefix; default $FLINKGO_HOME/checkpoints", func(c *Config, v string) error { c.CheckpointsDir = storagePath(v); return nil }},
	{"state.savepoints.dir", "", "default target directory of savepoints (savepoint and stop without a directory, the shutdown savepoints), a local directory or s3://bucket/prefix; default $FLINKGO_HOME/savepoints", func(c *Config, v string) error { c.SavepointsDir = storagePath(v); return nil }},
	{"state.backend.type", "hashmap", "where jobs keep keyed state while they run, unless their spec's stateBackend says otherwise: hashmap (Go memory) or pebble (an LSM on local disk, for state larger than memory); checkpoints and savepoints are the same on both (docs/state-backends.md)", func(c *Config, v string) error {
		t, err := api.StateBackendType(v)
		c.StateBackend = t
		return err
	}},
	{"state.backend.incremental", "false", "incremental checkpoints for pebble jobs whose spec does not say (stateBackend.incremental): a checkpoint writes only the DB files no earlier retained checkpoint holds; hashmap jobs write their whole state (docs/state-backends.md)", func(c *Config, v string) error {
		on, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("must be true or false, got %q", v)
		}
		c.StateIncremental = on
		return nil
	}},
	{"state.backend.pebble.localdir", "", "where pebble jobs keep their working state (one directory per subtask attempt, rebuilt from the checkpoint at every restore); a local directory; default $FLINKGO_HOME/pebble", func(c *Config, v string) error {
		if vfs.IsObject(v) || !filepath.IsAbs(v) {
			return fmt.Errorf("%q is not an absolute local path: pebble's working files must be on a local disk (checkpoints go to state.checkpoints.dir)", v)
		}
		c.PebbleLocalDir = filepath.Clean(v)
		return nil
	}},
	listKey("security.allowed-paths", "directories the API may read or write for savepoint paths (-s, savepoint targets); empty: any absolute path", func(c *Config, paths []string) error {
		c.AllowedPaths = nil
		for _, p := range paths {
			if vfs.IsObject(p) {
				if !vfs.IsAbs(p) {
					return fmt.Errorf("%q names no bucket", p)
				}
				c.AllowedPaths = append(c.AllowedPaths, vfs.Clean(p))
				continue
			}
			if !filepath.IsAbs(p) {
				return fmt.Errorf("%q is not an absolute path (or an s3://bucket/prefix URL)", p)
			}
			c.AllowedPaths = append(c.AllowedPaths, filepath.Clean(p))
		}
		return nil
	}),
	{"daemon.shutdown-savepoint-timeout", "10s", "on SIGTERM each running job is stopped with a savepoint (resumed from it at the next start); past this it is suspended without one", func(c *Config, v string) error {
		d, err := api.ParseDuration(v)
		if err != nil {
			return err
		}
		c.ShutdownSavepointTimeout = d.D()
		return nil
	}},
	{"daemon.umask", "0077", "umask of the daemon: the files it creates (state files, checkpoints, savepoints, the registry, job.out, file sink output) get 0666 and its directories 0777 minus these bits; 0077 keeps them to the daemon's user (0600, 0700), 0027 lets its group read", func(c *Config, v string) error {
		m, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32)
		if err != nil || m > 0o777 {
			return fmt.Errorf("must be octal permission bits such as 0077 or 0027, got %q", v)
		}
		c.Umask = int(m)
		return nil
	}},
	{"daemon.job-out.max-size", "16MiB", "jobs/<id>/job.out (print sink lines) is rotated to job.out.1 when it would grow past this; one previous file is kept", func(c *Config, v string) error {
		b, err := api.ParseByteSize(v)
		if err != nil {
			return err
		}
		if b < 1024 {
			return fmt.Errorf("must be at least 1KiB, got %s", b)
		}
		c.JobOutMaxSize = int64(b)
		return nil
	}},
	{"daemon.gc-heap-floor", "0", "heap the daemon's Go garbage collector lets grow before collecting, as if that much were live (0 disables; see docs/gc-heap-floor.md)", func(c *Config, v string) error {
		b, err := api.ParseByteSize(v)
		if err != nil {
			return err
		}
		c.GCHeapFloor = int64(b)
		return nil
	}},
	{"log.level", "info", "debug, info, warn or error", func(c *Config, v string) error {
		switch v {
		case "debug", "info", "warn", "error":
			c.LogLevel = v
			return nil
		}
		return fmt.Errorf("must be debug, info, warn or error, got %q", v)
	}},
	{"high-availability.type", "NONE", "NONE (one daemon) or etcd: daemons with the same cluster id share their jobs through etcd (docs/high-availability.md)", func(c *Config, v string) error {
		switch strings.ToLower(v) {
		case "", "none":
			c.HA.Type = ""
			return nil
		case "etcd":
			c.HA.Type = "etcd"
			return nil
		}
		return fmt.Errorf("must be NONE or etcd, got %q", v)
	}},
	listKey("high-availability.etcd.endpoints", "etcd client URLs (http://host:2379)", func(c *Config, endpoints []string) error {
		c.HA.Endpoints = endpoints
		return nil
	}),
	{"high-availability.storageDir", "", "storage shared by the cluster's daemons, s3://bucket/prefix (through the s3.* keys) or a shared POSIX directory: checkpoints and savepoints go under <dir>/<cluster-id>/ unless state.checkpoints.dir / state.savepoints.dir say otherwise", func(c *Config, v string) (err error) {
		c.HA.StorageDir, err = sharedDir(v)
		return err
	}},
	{"high-availability.cluster-id", "default", "daemons with the same cluster id form one cluster", func(c *Config, v string) error {
		if v == "" || strings.ContainsAny(v, "/ ") {
			return fmt.Errorf("must be a non-empty name without '/' or spaces, got %q", v)
		}
		c.HA.ClusterID = v
		return nil
	}},
	{"high-availability.etcd.lease-ttl", "10s", "a daemon that stops answering etcd for this long loses its jobs to the others (whole seconds, at least 2s)", func(c *Config, v string) error {
		d, err := api.ParseDuration(v)
		if err != nil {
			return err
		}
		if d.D() < 2*time.Second || d.D()%time.Second != 0 {
			return fmt.Errorf("must be whole seconds and at least 2s, got %s", d)
		}
		c.HA.LeaseTTL = d.D()
		return nil
	}},
	{"execution.checkpointing.interval", "", "checkpoint interval for jobs that do not set one; unset: checkpointing off (as in Flink)", durationKey(func(c *Config) **api.Duration { return &c.Checkpointing.Interval })},
	{"execution.checkpointing.mode", "EXACTLY_ONCE", "EXACTLY_ONCE or AT_LEAST_ONCE",
		flinkEnum(func(c *Config) *string { return &c.Checkpointing.Mode }, api.ExactlyOnce, api.AtLeastOnce)},
	{"execution.checkpointing.timeout", "10min", "a checkpoint not completed in this time is aborted", durationKey(func(c *Config) **api.Duration { return &c.Checkpointing.Timeout })},
	{"execution.checkpointing.min-pause", "0", "least time between the end of one checkpoint and the start of the next", durationKey(func(c *Config) **api.Duration { return &c.Checkpointing.MinPause })},
	{"execution.checkpointing.max-concurrent-checkpoints", "1", "checkpoints that may be in progress at once", intKey(func(c *Config) **int { return &c.Checkpointing.MaxConcurrent })},
	{"execution.checkpointing.tolerable-failed-checkpoints", "0", "consecutive checkpoint failures tolerated before the job fails over", intKey(func(c *Config) **int { return &c.Checkpointing.TolerableFailures })},
	{"execution.checkpointing.externalized-checkpoint-retention", "DELETE_ON_CANCELLATION", "RETAIN_ON_CANCELLATION or DELETE_ON_CANCELLATION",
		flinkEnum(func(c *Config) *string { return &c.Checkpointing.Externalized }, api.RetainOnCancellation, api.DeleteOnCancellation)},
	{"execution.checkpointing.num-retained", "1", "completed checkpoints kept per job", intKey(func(c *Config) **int { return &c.Checkpointing.Retained })},
	{"restart-strategy.type", "", "none, fixed-delay, exponential-delay or failure-rate; unset: none without checkpointing, exponential-delay with it", func(c *Config, v string) error {
		if v == "" {
			c.Restart.Type = ""
			return nil
		}
		if t, ok := api.RestartType(v); ok {
			c.Restart.Type = t
			return nil
		}
		return fmt.Errorf("must be none, fixed-delay, exponential-delay or failure-rate, got %q", v)
	}},
	{"restart-strategy.fixed-delay.attempts", "1", "restarts before the job fails", restartInt(api.RestartFixedDelay, func(r *api.RestartSpec) **int { return &r.Attempts })},
	{"restart-strategy.fixed-delay.delay", "1s", "wait before each restart", restartDuration(api.RestartFixedDelay, func(r *api.RestartSpec) **api.Duration { return &r.Delay })},
	{"restart-strategy.exponential-delay.initial-backoff", "1s", "first restart delay", restartDuration(api.RestartExponentialDelay, func(r *api.RestartSpec) **api.Duration { return &r.InitialBackoff })},
	{"restart-strategy.exponential-delay.max-backoff", "1min", "largest restart delay", restartDuration(api.RestartExponentialDelay, func(r *api.RestartSpec) **api.Duration { return &r.MaxBackoff })},
	{"restart-strategy.exponential-delay.backoff-multiplier", "1.5", "factor between consecutive delays", restartFloat(api.RestartExponentialDelay, func(r *api.RestartSpec) **float64 { return &r.Multiplier })},
	{"restart-strategy.exponential-delay.jitter-factor", "0.1", "random +- share of each delay", restartFloat(api.RestartExponentialDelay, func(r *api.RestartSpec) **float64 { return &r.Jitter })},
	{"restart-strategy.exponential-delay.reset-backoff-threshold", "1h", "running this long without failure resets the delay", restartDuration(api.RestartExponentialDelay, func(r *api.RestartSpec) **api.Duration { return &r.ResetThreshold })},
	{"restart-strategy.exponential-delay.attempts-before-reset-backoff", "2147483647", "restarts allowed before the delay resets", restartInt(api.RestartExponentialDelay, func(r *api.RestartSpec) **int { return &r.Attempts })},
	{"restart-strategy.failure-rate.max-failures-per-interval", "1", "failures tolerated within the interval", restartInt(api.RestartFailureRate, func(r *api.RestartSpec) **int { return &r.MaxFailures })},
	{"restart-strategy.failure-rate.failure-rate-interval", "1min", "window of the failure rate", restartDuration(api.RestartFailureRate, func(r *api.RestartSpec) **api.Duration { return &r.Interval })},
	{"restart-strategy.failure-rate.delay", "1s", "wait before each restart", restartDuration(api.RestartFailureRate, func(r *api.RestartSpec) **api.Duration { return &r.Delay })},
}, s3Keys...)

// nonNegativeInt sets a whole number of 0 or more.
func nonNegativeInt(field func(*Config) *int) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("must be a whole number of 0 or more, got %q", v)
		}
		*field(c) = n
		return nil
	}
}

// flinkEnum accepts Flink's spelling of an enum (EXACTLY_ONCE) or ours
// (exactly-once) and stores ours.
func flinkEnum(field func(*Config) *string, values ...string) func(*Config, string) error {
	return func(c *Config, v string) error {
		if ok, known := api.EnumValue(v, values...); known {
			*field(c) = ok
			return nil
		}
		names := make([]string, len(values))
		for i, ok := range values {
			names[i] = strings.ToUpper(strings.ReplaceAll(ok, "-", "_"))
		}
		return fmt.Errorf("must be %s, got %q", strings.Join(names, " or "), v)
	}
}

func durationKey(field func(*Config) **api.Duration) func(*Config, string) error {
	return func(c *Config, v string) error {
		if v == "" {
			return nil
		}
		d, err := api.ParseDuration(v)
		if err != nil {
			return err
		}
		*field(c) = &d
		return nil
	}
}

func intKey(field func(*Config) **int) func(*Config, string) error {
	return func(c *Config, v string) error {
		i, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("must be an integer, got %q", v)
		}
		*field(c) = &i
		return nil
	}
}

// Restart keys of one type only apply when that type is in effect; the
// per-type defaults are applied by api.ResolveRestart, so only values a
// user set are recorded.
func restartInt(typ string, field func(*api.RestartSpec) **int) func(*Config, string) error {
	return func(c *Config, v string) error {
		i, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("must be an integer, got %q", v)
		}
		*field(c.restartOptions(typ)) = &i
		return nil
	}
}

func restartDuration(typ string, field func(*api.RestartSpec) **api.Duration) func(*Config, string) error {
	return func(c *Config, v string) error {
		d, err := api.ParseDuration(v)
		if err != nil {
			return err
		}
		*field(c.restartOptions(typ)) = &d
		return nil
	}
}

func restartFloat(typ string, field func(*api.RestartSpec) **float64) func(*Config, string) error {
	return func(c *Config, v string) error {
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return fmt.Errorf("must be a number, got %q", v)
		}
		*field(c.restartOptions(typ)) = &f
		return nil
	}
}

// restartOptions returns the options of restart type typ, creating them.
func (c *Config) restartOptions(typ string) *api.RestartSpec {
	if c.Restart.Options == nil {
		c.Restart.Options = map[string]*api.RestartSpec{}
	}
	if c.Restart.Options[typ] == nil {
		c.Restart.Options[typ] = &api.RestartSpec{Type: typ}
	}
	return c.Restart.Options[typ]
}

// Keys returns the names, defaults and descriptions of every key.
func Keys() [][3]string {
	out := make([][3]string, len(keys))
	for i, k := range keys {
		out[i] = [3]string{k.name, k.def, k.doc}
	}
	return out
}

func lookupKey(name string) (key, bool) {
	for _, k := range keys {
		if k.name == name {
			return k, true
		}
	}
	return key{}, false
}

func keyNames() []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.name
	}
	return out
}
