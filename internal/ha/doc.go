// Package ha is flinkgo's high-availability mode: several daemons that
// share one etcd cluster and one storage directory form one flinkgo
// cluster. etcd holds each job's record (spec, state, savepoint origin and
// the recovery record with the checkpoint pointer), which daemon owns it
// (one election per job, bound to the owner's session lease), and the
// live daemons. The owner writes a job's record only in a transaction
// guarded by its election revision, and its jobs write to the storage
// only while its lease is certainly alive (Fence), so an owner that lost
// its lease (crash, partition, a frozen process) can neither publish a
// checkpoint nor commit output. When an owner goes, the others decide
// with one pure function (Assign) which of them takes each orphaned job,
// and that daemon restores it from the latest recorded checkpoint.
//
// The etcd layout under /flinkgo/<cluster-id>/ (keys.go):
//
//	members/<name>        a live daemon: name, REST address, draining (on its lease)
//	jobs/<job-id>         the job's record (Job: active, owner, request id, the daemon's record)
//	owners/<job-id>/<id>  the job's election (concurrency.Election; the oldest key owns it)
//	token                 the cluster's bearer token, shared by its daemons
//
// docs/high-availability.md gives the design and the fencing argument.
package ha
