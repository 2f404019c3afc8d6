package kafka

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/flinkgo/flinkgo/pkg/runtime"
)

// The exactly-once sink claims each transactional-id prefix it writes or
// takes over, as the file sink claims its directory (runtime.ClaimOutput,
// the same rule: runtime.OutputClaim.Check). Two jobs restoring one
// savepoint would otherwise both commit what follows it (fencing does not
// stop them: each writes under its own job's prefix). The marker is a
// committed offset of the consumer group claimGroup(prefix), on the
// sink's topic, partition 0, whose metadata names the owning job: brokers
// keep it (in __consumer_offsets, a compacted topic) without a record in
// the output, and every Kafka has it. A restore takes the prefix of the
// job whose snapshot it restores over; a second job restoring the same
// snapshot finds the first as owner and is refused; the old job, should it
// still run, is refused at its next restart.
//
// Limit: reading and writing the marker are two requests; two restores
// started within that window may both pass (each reads the marker back
// after writing it, which narrows the window to the other's write landing
// between its own write and read-back).

// claimGroup names the group holding the marker of a prefix.
func claimGroup(prefix string) string { return "flinkgo-sink-owner." + prefix }

// claimPrefixes claims every prefix for c, refusing with an error wrapping
// runtime.ErrOutputOwned when another job owns one.
func (cl *franzClient) claimPrefixes(ctx context.Context, prefixes []string, c runtime.OutputClaim) error {
	for _, p := range prefixes {
		if err := cl.claim(ctx, p, c); err != nil {
			return err
		}
	}
	return nil
}

func (cl *franzClient) claim(ctx context.Context, prefix string, c runtime.OutputClaim) error {
	what := fmt.Sprintf("transactional ids %s-* (marker: group %s)", prefix, claimGroup(prefix))
	owner, err := cl.readClaim(ctx, prefix)
	if err != nil {
		return err
	}
	if err := c.Check(what, owner, true); err != nil {
		return ownedError(what, owner)
	}
	if owner != nil && owner.Job == c.Job {
		return nil
	}
	me := runtime.OutputOwner{Version: 1, Job: c.Job, JobName: c.JobName, Operator: c.Operator, Since: time.Now().UTC()}
	if err := cl.writeClaim(ctx, prefix, me); err != nil {
		return err
	}
	back, err := cl.readClaim(ctx, prefix)
	if err != nil {
		return err
	}
	if back == nil || back.Job != c.Job {
		return ownedError(what, back)
	}
	return nil
}

// ownedError words a refusal.
func ownedError(what string, owner *runtime.OutputOwner) error {
	if owner == nil {
		return fmt.Errorf("%w: %s: the marker vanished while claiming it; try again", runtime.ErrOutputOwned, what)
	}
	return runtime.SuppressRestarts(fmt.Errorf("%w: %s belong to job %s (%q, operator %q, since %s): two jobs writing on from one snapshot would both commit its output after it (duplicates). "+
		"Cancel that job, or restore a savepoint of it with `flinkgo run -s`; pass --allow-non-empty-output to take them over anyway",
		runtime.ErrOutputOwned, what, owner.Job, owner.JobName, owner.Operator, owner.Since.Format(time.RFC3339)))
}

func (cl *franzClient) readClaim(ctx context.Context, prefix string) (*runtime.OutputOwner, error) {
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Group = claimGroup(prefix)
	t := kmsg.NewOffsetFetchRequestTopic()
	t.Topic, t.Partitions = cl.cfg.topic, []int32{0}
	req.Topics = append(req.Topics, t)
	var resp *kmsg.OffsetFetchResponse
	err := retry(ctx, func() error {
		var err error
		if resp, err = req.RequestWith(ctx, cl.admin); err != nil {
			return err
		}
		return kerr.ErrorForCode(resp.ErrorCode)
	})
	switch {
	case errors.Is(err, kerr.GroupIDNotFound):
		return nil, nil // no marker yet
	case err != nil:
		return nil, fmt.Errorf("read the owner of transactional ids %s-*: %w", prefix, err)
	}
	type part struct {
		code   int16
		offset int64
		meta   *string
	}
	var parts []part
	for _, rt := range resp.Topics {
		for _, p := range rt.Partitions {
			parts = append(parts, part{p.ErrorCode, p.Offset, p.Metadata})
		}
	}
	for _, g := range resp.Groups { // OffsetFetch v8 and up
		for _, rt := range g.Topics {
			for _, p := range rt.Partitions {
				parts = append(parts, part{p.ErrorCode, p.Offset, p.Metadata})
			}
		}
	}
	for _, p := range parts {
		{
			if p.code != 0 || p.offset < 0 || p.meta == nil || *p.meta == "" {
				continue
			}
			var o runtime.OutputOwner
			if err := json.Unmarshal([]byte(*p.meta), &o); err != nil || o.Job == "" {
				return nil, fmt.Errorf("group %s holds no flinkgo owner marker (%q): delete the group if no job writes with transactional ids %s-*", req.Group, *p.meta, prefix)
			}
			return &o, nil
		}
	}
	return nil, nil
}

func (cl *franzClient) writeClaim(ctx context.Context, prefix string, o runtime.OutputOwner) error {
	meta, err := json.Marshal(o)
	if err != nil {
		return err
	}
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group, req.Generation = claimGroup(prefix), -1
	t := kmsg.NewOffsetCommitRequestTopic()
	t.Topic = cl.cfg.topic
	p := kmsg.NewOffsetCommitRequestTopicPartition()
	p.Partition, p.Offset, p.Metadata = 0, 0, kmsg.StringPtr(string(meta))
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	err = retry(ctx, func() error {
		resp, err := req.RequestWith(ctx, cl.admin)
		if err != nil {
			return err
		}
		for _, rt := range resp.Topics {
			for _, rp := range rt.Partitions {
				if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("claim transactional ids %s-* (group %s): %w", prefix, req.Group, err)
	}
	return nil
}
