package e2e

import "testing"

// The HA tests run one after another in TestHA, and the kill loops in
// TestKillLoops, each chain beside the other end-to-end tests. An HA test
// runs a 3-member etcd and several daemons: two at once on 2 cores starve
// etcd past the deadlines its leases and elections assume ("claim new job:
// context deadline exceeded"). A kill loop keeps a daemon restarting for
// minutes: two at once slow each other's recovery past their consumers'
// waits.
//
// One parallel test per chain, not a lock taken by each test after
// t.Parallel: a test waiting for such a lock holds one of the -parallel
// turns all the while (230 s of turns in one run of the package, with
// -parallel 3). The chains are the package's longest work (some 100 s
// each under load), so they take the first turns (parallelFirst,
// turns_test.go).

func TestHA(t *testing.T) {
	parallelFirst(t)
	for _, c := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"FailoverOnS3", haFailoverOnS3},
		{"ZombieOwnerCommitsNothing", haZombieOwnerCommitsNothing},
		{"EtcdMembersLost", haEtcdMembersLost},
		{"OperationsThroughAnyDaemon", haOperationsThroughAnyDaemon},
		{"DocsBlock", haDocsBlock},
	} {
		t.Run(c.name, c.run)
	}
}

func TestKillLoops(t *testing.T) {
	parallelFirst(t)
	for _, c := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"KafkaToKafkaExactlyOnce", killLoopKafkaToKafkaExactlyOnce},
		{"KafkaToFilesExactlyOnce", killLoopKafkaToFilesExactlyOnce},
		{"OnS3ExactlyOnce", killLoopOnS3ExactlyOnce},
	} {
		t.Run(c.name, c.run)
	}
}
