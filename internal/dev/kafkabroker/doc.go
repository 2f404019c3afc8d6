// Package kafkabroker runs an embedded Kafka-protocol broker for development
// and tests, in process, built on franz-go's kfake: one node by default, or
// several (Config.Nodes), which spreads partition leaders and transaction
// coordinators over the nodes as a real cluster does.
//
// It backs `flinkgo dev kafka` and the Kafka connector's tests. Clients
// (segmentio/kafka-go in flinkgo) talk to it over real TCP with the real
// Kafka protocol; nothing is mocked. With a DataDir the broker keeps its
// topics, records and committed group offsets across a Close and a new Start
// on the same directory.
//
// Lifecycle: Start listens and returns once the broker answers requests;
// every method may be called from any goroutine until Close; Close is
// idempotent. A Broker is not a production Kafka: it has no replication and
// no quotas, and its on-disk format is kfake's.
package kafkabroker
