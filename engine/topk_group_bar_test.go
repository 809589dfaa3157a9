package engine

import (
	"sync/atomic"
	"testing"
)

// With the bars on, fold retains only the rows within their group's bar
// when most of a batch is past it (a copy of them): the rows kept, their
// order and the ties (the earlier row first) are those of the operator
// without bars, serially and partitioned, with nulls and equal values in
// the rank column, one group or many, and an empty input.
func TestTopNPerGroupBarCopy(t *testing.T) {
	for _, c := range []struct {
		name         string
		rows, groups int
		n            int64
		distinct     int // values of the rank column (few: ties)
		nulls        bool
		bs, workers  int
		wantCopies   bool
		desc         bool
	}{
		{name: "one group", rows: 5000, groups: 1, n: 2, distinct: 100000, bs: 256, workers: 1, wantCopies: true, desc: true},
		{name: "many groups", rows: 20000, groups: 500, n: 2, distinct: 100000, bs: 1024, workers: 1, wantCopies: true, desc: true},
		{name: "ties and nulls", rows: 8000, groups: 20, n: 3, distinct: 7, nulls: true, bs: 300, workers: 1, wantCopies: true},
		{name: "partitioned", rows: 20000, groups: 300, n: 2, distinct: 100000, bs: 512, workers: 3, wantCopies: true, desc: true},
		{name: "partitioned, ties", rows: 20000, groups: 300, n: 2, distinct: 40, nulls: true, bs: 512, workers: 2, wantCopies: true},
		{name: "every row its own group", rows: 3000, groups: 3000, n: 1, distinct: 100000, bs: 200, workers: 1},
		{name: "empty", rows: 0, groups: 1, n: 2, distinct: 10, bs: 64, workers: 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			ran := withTopNRadix(t, c.workers)
			parallelMinRows = 1000
			var copies atomic.Int64 // (called on the workers)
			old := topNBarCopied
			t.Cleanup(func() { topNBarCopied, topNBars = old, true })
			topNBarCopied = func() { copies.Add(1) }
			k, v := make([]any, c.rows), make([]any, c.rows)
			for i := range c.rows {
				k[i] = int64((i * 7919) % c.groups)
				if c.nulls && i%11 == 0 {
					continue
				}
				v[i] = float64((i*104729)%c.distinct) / 8
			}
			data := []tcol{{"k", tInt64, k}, {"v", tF64, v}}
			key := "v"
			if c.desc {
				key = "-v"
			}
			plan := topNOf(scanOf(schemaOf(data)), c.n, []string{"k"}, key)
			topNBars = false
			want, err := runRows(t, plan, data, 1, c.bs, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if copies.Load() != 0 {
				t.Fatalf("%d copies without bars", copies.Load())
			}
			topNBars = true
			got, err := runRows(t, plan, data, 1, c.bs, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !rowsEq(got, want) {
				t.Fatalf("got\n%swant\n%s", fmtRows(got), fmtRows(want))
			}
			if (copies.Load() > 0) != c.wantCopies {
				t.Fatalf("%d copies of the rows within the bars, want some: %v", copies.Load(), c.wantCopies)
			}
			if c.workers > 1 && *ran == 0 {
				t.Fatal("the partitioned path did not run")
			}
			t.Logf("%d copies, %d rows out", copies.Load(), len(got))
		})
	}
}
