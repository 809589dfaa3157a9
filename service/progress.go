package service

import (
	"context"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/quarrydb/quarry/catalog"
)

// ProgressFunc receives scan progress: rows read from the data file so far
// and the rows the scan will read in total (0 when unknown). It is called
// from the query's goroutine and must not block.
type ProgressFunc func(done, total int64)

type progressKey struct{}

// WithProgress returns ctx carrying fn: queries run with it report how
// many rows they have scanned (at most every ProgressInterval, and once at
// the end of each scan).
func WithProgress(ctx context.Context, fn ProgressFunc) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

func progressFrom(ctx context.Context) ProgressFunc {
	fn, _ := ctx.Value(progressKey{}).(ProgressFunc)
	return fn
}

// ProgressInterval is the least time between two progress reports of one scan.
const ProgressInterval = 200 * time.Millisecond

// progressSource counts the rows its source's readers return.
type progressSource struct {
	src    catalog.Source
	total  int64
	report ProgressFunc
}

// Scan implements catalog.Source.
func (p *progressSource) Scan(ctx context.Context, opts catalog.ScanOptions) (array.RecordReader, error) {
	rr, err := p.src.Scan(ctx, opts)
	if err != nil {
		return nil, err
	}
	p.report(0, p.total) // a scan starts: callers can tell scans apart
	return &progressReader{RecordReader: rr, total: p.total, report: p.report, last: time.Now()}, nil
}

type progressReader struct {
	array.RecordReader
	total  int64
	report ProgressFunc

	mu   sync.Mutex
	done int64
	last time.Time
	end  bool
}

// Next counts the rows of each batch and reports progress.
func (r *progressReader) Next() bool {
	ok := r.RecordReader.Next()
	r.mu.Lock()
	defer r.mu.Unlock()
	if ok {
		if rec := r.RecordReader.RecordBatch(); rec != nil {
			r.done += rec.NumRows()
		}
		if now := time.Now(); now.Sub(r.last) >= ProgressInterval {
			r.last = now
			r.report(r.done, r.total)
		}
	} else if !r.end {
		r.end = true
		if r.RecordReader.Err() == nil {
			r.report(r.done, max(r.total, r.done))
		}
	}
	return ok
}

// RecordBatch returns the current batch.
func (r *progressReader) RecordBatch() arrow.RecordBatch { return r.RecordReader.RecordBatch() }

// Record is the deprecated alias of RecordBatch.
func (r *progressReader) Record() arrow.RecordBatch { return r.RecordReader.RecordBatch() }

// ScanStats implements catalog.ScanStatser for a reader that counts them.
func (p *progressReader) ScanStats() (catalog.ScanStats, bool) {
	return catalog.StatsOf(p.RecordReader)
}
