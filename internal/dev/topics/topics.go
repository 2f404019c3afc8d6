// Package topics creates and lists the topics of a running Kafka broker,
// over the wire, behind `flinkgo dev kafka topics create|list`: a topic can
// be added to `flinkgo dev kafka` (or any broker) after it started.
package topics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/flinkgo/flinkgo/internal/dev/kafkabroker"
)

// requestTimeout bounds one admin request.
const requestTimeout = 10 * time.Second

// Info is a topic and its partition count.
type Info struct {
	Name       string `json:"name"`
	Partitions int    `json:"partitions"`
}

// Create creates ts on brokers, each with replication factor 1 (a
// development broker has one node). A topic that exists already is an
// error wrapping kafkabroker.ErrTopicExists; nothing after it is created.
func Create(ctx context.Context, brokers []string, ts []kafkabroker.Topic) error {
	cl, done := client(brokers)
	defer done()
	for _, t := range ts {
		if err := create(ctx, cl, t); err != nil {
			return err
		}
	}
	return nil
}

func create(ctx context.Context, cl *kafka.Client, t kafkabroker.Topic) error {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	resp, err := cl.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{
		{Topic: t.Name, NumPartitions: t.Partitions, ReplicationFactor: 1}}})
	if err != nil {
		return fmt.Errorf("create topic %s on %v: %w", t.Name, cl.Addr, err)
	}
	err = resp.Errors[t.Name]
	if errors.Is(err, kafka.TopicAlreadyExists) {
		return fmt.Errorf("create topic %s: %w", t.Name, kafkabroker.ErrTopicExists)
	}
	if err != nil {
		return fmt.Errorf("create topic %s: %w", t.Name, err)
	}
	return nil
}

// List returns the topics of brokers, sorted by name.
func List(ctx context.Context, brokers []string) ([]Info, error) {
	cl, done := client(brokers)
	defer done()
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	resp, err := cl.Metadata(ctx, &kafka.MetadataRequest{})
	if err != nil {
		return nil, fmt.Errorf("list topics on %v: %w", brokers, err)
	}
	out := make([]Info, 0, len(resp.Topics))
	for _, t := range resp.Topics {
		if !t.Internal {
			out = append(out, Info{Name: t.Name, Partitions: len(t.Partitions)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// client is a client of brokers with its own connections, closed by done.
func client(brokers []string) (*kafka.Client, func()) {
	tr := &kafka.Transport{}
	var addr net.Addr = kafka.TCP(brokers...)
	return &kafka.Client{Addr: addr, Transport: tr}, tr.CloseIdleConnections
}

// Delete deletes topics from brokers; a topic that does not exist is an
// error naming it.
func Delete(ctx context.Context, brokers []string, names []string) error {
	cl, done := client(brokers)
	defer done()
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	resp, err := cl.DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: names})
	if err != nil {
		return fmt.Errorf("delete topics %v on %v: %w", names, brokers, err)
	}
	for _, n := range names {
		if err := resp.Errors[n]; err != nil {
			return fmt.Errorf("delete topic %s: %w", n, err)
		}
	}
	return nil
}
