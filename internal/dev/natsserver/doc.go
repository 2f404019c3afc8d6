// Package natsserver runs an embedded NATS server with JetStream and a
// sequential producer, behind `flinkgo dev nats` and `flinkgo dev produce
// --nats`, and in the tests of the nats connector.
//
// FOR DEVELOPMENT ONLY: one node, no authentication, no TLS, listening on
// loopback by default. Streams live in memory unless Config.StoreDir is set.
package natsserver
