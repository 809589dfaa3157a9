package service

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/internal/obs"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/materialize"
	"github.com/quarrydb/quarry/planner"
)

// topValues is the number of most frequent values a column profile lists.
const topValues = 3

// maxTopValueBytes drops long values (free text) from the top values.
const maxTopValueBytes = 80

// Summary profiles a dataset (the quarry://datasets/{dataset}/summary
// resource): per column the null count, min and max, the number of
// distinct values and the most frequent values. Datasets with more than
// SampleRows rows are profiled from their first SampleRows rows. Profiles
// are cached per file version; roles and units come from the current
// schema card.
func (s *Service) Summary(ctx context.Context, dataset string) (*SummaryResponse, error) {
	return onDataset(ctx, s, dataset, func(d *catalog.Dataset) (*SummaryResponse, error) {
		return s.summaryOf(ctx, d)
	})
}

// summaryOf is Summary for dataset d.
func (s *Service) summaryOf(ctx context.Context, d *catalog.Dataset) (*SummaryResponse, error) {
	var err error
	key := fmt.Sprintf("%s\x00%s\x00%d\x00%d", d.AbsPath, d.ID, d.SizeBytes, d.ModTime.UnixNano())
	p, cached := s.profiles.Get(key)
	if !cached {
		start := time.Now()
		if p, err = s.profile(ctx, d); err != nil {
			return nil, err
		}
		s.profiles.Add(key, p)
		obs.Logger(ctx).Info("summary", "dataset", d.ID, "profiled_rows", p.ProfiledRows, "duration_ms", time.Since(start).Milliseconds())
	}
	out := *p
	out.Columns = append([]ColumnProfile(nil), p.Columns...)
	for i := range out.Columns {
		cc := d.Card.Column(out.Columns[i].Name)
		out.Columns[i].Role, out.Columns[i].Unit = cc.Role, cc.Unit
	}
	return &out, nil
}

// profile computes a dataset's summary from (the first rows of) its data.
func (s *Service) profile(ctx context.Context, d *catalog.Dataset) (*SummaryResponse, error) {
	ctx, cancel := s.withDeadline(ctx) // one deadline for all the profile's queries
	defer cancel()
	var sample int64
	if d.RowCount > s.cfg.SampleRows {
		sample = s.cfg.SampleRows
	}
	fields := d.Schema.Fields()
	out := &SummaryResponse{Dataset: d.ID, RowCount: d.RowCount, Columns: []ColumnProfile{}}
	if len(fields) > SchemaMaxColumns {
		fields, out.ColumnsTruncated = fields[:SchemaMaxColumns], true
	}
	var cols []string
	for _, f := range fields {
		if profilable(f.Type) {
			cols = append(cols, f.Name)
		}
	}
	for _, f := range fields {
		out.Columns = append(out.Columns, ColumnProfile{Name: f.Name, Type: planner.TypeName(f.Type)})
	}
	if len(cols) == 0 {
		return out, nil
	}
	mem, err := s.sample(ctx, d, cols, sample)
	if err != nil {
		return nil, err
	}
	defer mem.release()
	out.ProfiledRows = mem.rows
	out.Sampled = out.ProfiledRows < d.RowCount
	in := planner.Input{Dataset: d.ID, Schema: mem.schema, RowCount: mem.rows, RowCountExact: true}

	// One aggregate over every column: non-null counts, minima and maxima.
	aggs := []planner.AggSpec{{Col: "*", Fn: planner.AggCount, As: "n"}}
	for i, f := range mem.schema.Fields() {
		aggs = append(aggs, planner.AggSpec{Col: f.Name, Fn: planner.AggCount, As: fmt.Sprintf("n%d", i)})
		if ordered(f.Type) {
			aggs = append(aggs, planner.AggSpec{Col: f.Name, Fn: planner.AggMin, As: fmt.Sprintf("lo%d", i)},
				planner.AggSpec{Col: f.Name, Fn: planner.AggMax, As: fmt.Sprintf("hi%d", i)})
		}
	}
	agg, err := s.oneRecord(ctx, in, mem, planner.Spec{Aggs: aggs})
	if err != nil {
		return nil, err
	}
	var all int64
	_ = json.Unmarshal(agg["n"], &all)
	byName := map[string]*ColumnProfile{}
	for i := range out.Columns {
		byName[out.Columns[i].Name] = &out.Columns[i]
	}
	for i, f := range mem.schema.Fields() {
		p := byName[f.Name]
		var nonNull int64
		_ = json.Unmarshal(agg[fmt.Sprintf("n%d", i)], &nonNull)
		p.NullCount = all - nonNull
		if v := agg[fmt.Sprintf("lo%d", i)]; len(v) > 0 && string(v) != "null" {
			p.Min, p.Max = v, agg[fmt.Sprintf("hi%d", i)]
		}
		if err := s.valueCounts(ctx, in, mem, f.Name, p); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// valueCounts fills p's distinct estimate and top values.
func (s *Service) valueCounts(ctx context.Context, in planner.Input, src catalog.Source, col string, p *ColumnProfile) error {
	countName := "count_all"
	for col == countName {
		countName += "_"
	}
	t, err := s.runInMemory(ctx, in, src, planner.Spec{
		GroupBy: []string{col},
		Aggs:    []planner.AggSpec{{Col: "*", Fn: planner.AggCount, As: countName}},
		OrderBy: []planner.OrderSpec{{Col: countName, Desc: true}, {Col: col}},
	})
	if err != nil {
		return err
	}
	defer t.Release()
	p.DistinctEstimate = t.NumRows()
	if p.NullCount > 0 {
		p.DistinctEstimate--
	}
	raw, _, err := materialize.EncodeRecords(ctx, t, 0, topValues+1, 0)
	if err != nil {
		return err
	}
	var recs []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &recs); err != nil {
		return qerr.Internal(err, "decoding value counts")
	}
	names := materialize.ColumnNames(t.Schema())
	for _, r := range recs {
		v := r[names[0]]
		var n int64
		_ = json.Unmarshal(r[names[1]], &n)
		if string(v) == "null" || n < 2 || len(v) > maxTopValueBytes || len(p.TopValues) == topValues {
			continue
		}
		p.TopValues = append(p.TopValues, ValueCount{Value: v, Count: n})
	}
	return nil
}

// oneRecord runs spec (which must give one row) and returns that row's
// values as JSON, keyed by output column name.
func (s *Service) oneRecord(ctx context.Context, in planner.Input, src catalog.Source, spec planner.Spec) (map[string]json.RawMessage, error) {
	t, err := s.runInMemory(ctx, in, src, spec)
	if err != nil {
		return nil, err
	}
	defer t.Release()
	raw, err := materialize.Preview(t, 1)
	if err != nil {
		return nil, err
	}
	var recs []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &recs); err != nil || len(recs) != 1 {
		return nil, qerr.Internal(err, "decoding a one-row result")
	}
	return recs[0], nil
}

// profilable reports whether the summary can count and group a column type.
func profilable(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT32, arrow.FLOAT64, arrow.BOOL, arrow.STRING, arrow.LARGE_STRING, arrow.DATE32, arrow.TIMESTAMP:
		return true
	case arrow.DICTIONARY:
		vt := t.(*arrow.DictionaryType).ValueType.ID()
		return vt == arrow.STRING || vt == arrow.LARGE_STRING
	}
	return false
}

// ordered reports whether min and max work on a column type.
func ordered(t arrow.DataType) bool {
	return profilable(t) && t.ID() != arrow.DICTIONARY
}

// runInMemory prepares spec over the in-memory input src (described by in) and
// runs it.
func (s *Service) runInMemory(ctx context.Context, in planner.Input, src catalog.Source, spec planner.Spec) (*materialize.Table, error) {
	q, err := s.prepareOn(ctx, in, src, nil, spec)
	if err != nil {
		return nil, err
	}
	return q.run(ctx, 0)
}

// batchSource serves record batches held in memory as a catalog.Source
// (the summary profiles an in-memory sample with several queries).
type batchSource struct {
	schema  *arrow.Schema
	batches []arrow.RecordBatch
	rows    int64
}

// sample reads columns cols of d (its first n rows when n > 0) into memory.
func (s *Service) sample(ctx context.Context, d *catalog.Dataset, cols []string, n int64) (*batchSource, error) {
	in := planner.Input{Dataset: d.ID, Schema: d.Schema, RowCount: d.RowCount, RowCountExact: d.RowCountExact}
	q, err := s.prepareOn(ctx, in, d.Source, nil, planner.Spec{Columns: cols})
	if err != nil {
		return nil, err
	}
	out := &batchSource{}
	err = q.stream(ctx, n, nil, func(ctx context.Context, rr array.RecordReader) error {
		out.schema = rr.Schema()
		for rr.Next() {
			if err := ctx.Err(); err != nil {
				return err
			}
			b := rr.RecordBatch()
			if b == nil || b.NumRows() == 0 {
				continue
			}
			b.Retain()
			out.batches = append(out.batches, b)
			out.rows += b.NumRows()
		}
		return rr.Err()
	})
	if err != nil {
		out.release()
		return nil, err
	}
	return out, nil
}

func (m *batchSource) release() {
	for _, b := range m.batches {
		b.Release()
	}
	m.batches = nil
}

// Scan implements catalog.Source.
func (m *batchSource) Scan(_ context.Context, opts catalog.ScanOptions) (array.RecordReader, error) {
	idx := make([]int, 0, len(opts.Columns))
	fields := make([]arrow.Field, 0, len(opts.Columns))
	if len(opts.Columns) == 0 {
		for i, f := range m.schema.Fields() {
			idx, fields = append(idx, i), append(fields, f)
		}
	}
	for _, c := range opts.Columns {
		is := m.schema.FieldIndices(c)
		if len(is) == 0 {
			return nil, qerr.Internal(nil, "batch source: no column %q", c)
		}
		idx, fields = append(idx, is[0]), append(fields, m.schema.Field(is[0]))
	}
	out := arrow.NewSchema(fields, nil)
	recs := make([]arrow.RecordBatch, 0, len(m.batches))
	for _, b := range m.batches {
		cols := make([]arrow.Array, len(idx))
		for i, j := range idx {
			cols[i] = b.Column(j)
		}
		recs = append(recs, array.NewRecordBatch(out, cols, b.NumRows()))
	}
	rr, err := array.NewRecordReader(out, recs)
	for _, r := range recs {
		r.Release()
	}
	if err != nil {
		return nil, qerr.Internal(err, "batch source")
	}
	return rr, nil
}
