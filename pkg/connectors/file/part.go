package file

import (
	"bufio"
	"slices"
	"time"

	"github.com/flinkgo/flinkgo/pkg/vfs"
)

// partFile is an open in-progress part file of one bucket. Writes go
// through a buffer; size counts buffered bytes too.
type partFile struct {
	bucket string
	index  int
	part   int64
	hidden string
	final  string

	f      vfs.File
	w      *bufio.Writer
	size   int64 // bytes written, buffered ones included
	synced int64 // size at the last Sync (-1: must sync even if unchanged)
	// bulk is the Parquet file being written (format parquet; nil for a
	// part resumed from a snapshot of another format). size is then the
	// parquet writer's estimate until roll writes the footer.
	bulk *bulkPart

	created   time.Time
	lastWrite time.Time
}

func (p *partFile) resumable() resumable {
	r := resumable{Bucket: p.bucket, Hidden: p.hidden, Final: p.final, Index: p.index, Part: p.part, Length: p.size}
	if u, ok := p.f.(*upload); ok {
		r.Upload, r.Parts, r.Tail = u.id, slices.Clone(u.parts), slices.Clone(u.tail)
	}
	return r
}

func (p *partFile) pending(checkpoint int64) pending {
	pd := pending{Bucket: p.bucket, Hidden: p.hidden, Final: p.final, Index: p.index, Part: p.part,
		Size: p.size, Checkpoint: checkpoint}
	if u, ok := p.f.(*upload); ok {
		pd.Upload, pd.Parts = u.id, slices.Clone(u.parts)
	}
	return pd
}

// persist flushes the buffer and makes the data durable.
func (p *partFile) persist() error {
	if err := p.w.Flush(); err != nil {
		return err
	}
	if p.synced == p.size {
		return nil
	}
	if err := p.f.Sync(); err != nil {
		return err
	}
	p.synced = p.size
	return nil
}
