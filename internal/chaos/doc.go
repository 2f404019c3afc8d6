// Package chaos holds the in-process fault suites of flinkgo: jobs
// run on an in-memory filesystem (vfs.MemFS) with faults injected at the
// runtime's named fault points, in the filesystem, and in operators, and
// an independent checker (internal/eocheck) reads only committed output to
// prove every input record is there exactly once.
//
//   - crash_test.go: a crash (process crash and power loss) at hits of
//     every fault point a datagen → keyBy → file job reaches, then recovery
//     from the latest complete checkpoint on what survived;
//   - taskfail_test.go: task failures in processing, snapshot, restore,
//     notify-complete and close at parallelism 1, 2 and 4, recovered by the
//     restart strategy, with a keyed count checked separately;
//   - diskfault_test.go: disk full and I/O errors at the k-th write, sync
//     or rename of checkpoints and of the file sink;
//   - nats_test.go: nats.publish, the connector point no connector test
//     injects, against an embedded NATS server;
//   - coverage_test.go: every registered fault point is reached by a suite
//     here or by a named test elsewhere;
//   - finalcheckpoint_test.go, metadatasync_test.go: reproductions of
//     runtime bugs the suites found, skipped unless FLINKGO_CHAOS_REPRO=1.
//
// Every suite records its figures with internal/scorecard. Sweeps shrink
// with -short and grow with FLINKGO_CHAOS=long (make chaos).
package chaos
