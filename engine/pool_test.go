package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// poolCols is a table whose sort needs a few MiB of engine memory.
func poolCols(n int) []tcol {
	k, s := make([]any, n), make([]any, n)
	for i := range n {
		k[i] = int64(n - i)
		s[i] = fmt.Sprintf("value-%09d-padding-padding", i)
	}
	return []tcol{{"k", tInt64, k}, {"s", tStr, s}}
}

// serverExhausted reports a resource_exhausted error of the server pool.
func serverExhausted(err error) bool {
	e := qerr.As(err)
	return errors.Is(err, qerr.ErrLimitExceeded) && e != nil && e.Code == qerr.CodeResourceExhausted &&
		e.Diagnostics["scope"] == "server" && e.Hint != ""
}

// A query that needs more than the server pool fails with the pool's error
// (not its own limit's), and gives its reservation back.
func TestPoolRefusesGrowth(t *testing.T) {
	alloc := newAlloc()
	defer alloc.AssertSize(t, 0)
	cols := poolCols(60_000)
	src := newSource(alloc, cols)
	defer src.release()
	pool := NewPool(poolChunk+poolChunk/8, 10*time.Millisecond)
	plan := aggOf(scanOf(schemaOf(cols)), []string{"s"}, "count:*", "max:s")
	_, err := run(t, plan, src, Options{Alloc: alloc, BatchSize: 4096, Pool: pool})
	if !serverExhausted(err) {
		t.Fatalf("err = %v, want the server pool's resource_exhausted", err)
	}
	if u := pool.Used(); u != 0 {
		t.Fatalf("pool still holds %d bytes", u)
	}
	// The same query runs in a big enough pool, which it leaves empty.
	big := NewPool(1<<30, 0)
	rows, err := run(t, plan, src, Options{Alloc: alloc, BatchSize: 4096, Pool: big})
	if err != nil || len(rows) != 60_000 {
		t.Fatalf("rows %d, err %v", len(rows), err)
	}
	if u := big.Used(); u != 0 {
		t.Fatalf("pool still holds %d bytes", u)
	}
}

// A query waits for a running one to give memory back, and fails to start
// when none comes back within the pool's wait.
func TestPoolAdmission(t *testing.T) {
	alloc := newAlloc()
	defer alloc.AssertSize(t, 0)
	src := seqSource(alloc, 1000)
	defer src.release()
	plan := scanOf(src.schema)
	for _, tc := range []struct {
		name    string
		wait    time.Duration
		release time.Duration // when the first query ends
		ok      bool
	}{
		{"times out", 30 * time.Millisecond, 300 * time.Millisecond, false},
		{"admitted when memory comes back", 5 * time.Second, 50 * time.Millisecond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pool := NewPool(poolChunk, tc.wait) // room for one query
			first, err := Execute(context.Background(), plan, src, Options{Alloc: alloc, BatchSize: 10, Pool: pool})
			if err != nil {
				t.Fatal(err)
			}
			if !first.Next() {
				t.Fatal(first.Err())
			}
			var wg sync.WaitGroup
			wg.Go(func() { time.Sleep(tc.release); first.Release() })
			start := time.Now()
			second, err := Execute(context.Background(), plan, src, Options{Alloc: alloc, BatchSize: 10, Pool: pool})
			if tc.ok {
				if err != nil {
					t.Fatal(err)
				}
				if rows, err := drain(t, second); err != nil || len(rows) != 1000 {
					t.Fatalf("rows %d, err %v", len(rows), err)
				}
			} else {
				if !serverExhausted(err) {
					t.Fatalf("err = %v", err)
				}
				if el := time.Since(start); el > time.Second {
					t.Fatalf("waited %v", el)
				}
			}
			wg.Wait()
			if u := pool.Used(); u != 0 {
				t.Fatalf("pool still holds %d bytes", u)
			}
		})
	}
	// A cancelled context stops the wait.
	pool := NewPool(poolChunk, time.Minute)
	first, err := Execute(context.Background(), plan, src, Options{Alloc: alloc, BatchSize: 10, Pool: pool})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Release()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := Execute(ctx, plan, src, Options{Alloc: alloc, Pool: pool}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
}

// Concurrent heavy queries under a small server cap: each one either
// returns the right answer or fails with the pool's structured error; the
// reservations never pass the cap and are all given back. Run again as
// the service does (Admission.Requeue), every query answers.
func TestPoolConcurrentQueries(t *testing.T) {
	for _, retry := range []bool{false, true} {
		t.Run(fmt.Sprintf("retry=%v", retry), func(t *testing.T) { poolConcurrentQueries(t, retry) })
	}
}

// runRequeued runs plan like the service: again as a retry while the run
// reports Requeue.
func runRequeued(t testing.TB, plan planner.Node, src catalog.Source, opts Options) ([][]any, error) {
	adm := &Admission{}
	for {
		opts.Admission = adm
		rows, err := run(t, plan, src, opts)
		if err == nil || !adm.Requeue {
			return rows, err
		}
		adm.Again(20 * time.Second)
	}
}

func poolConcurrentQueries(t *testing.T, retry bool) {
	alloc := newAlloc()
	defer alloc.AssertSize(t, 0)
	cols := poolCols(60_000)
	sch := schemaOf(cols)
	src := newSource(alloc, cols)
	defer src.release()
	plans := []planner.Node{
		sortOf(scanOf(sch), "s"),
		aggOf(scanOf(sch), []string{"s"}, "count:*"),
		&planner.Distinct{Input: scanOf(sch)},
	}
	wait := 200 * time.Millisecond
	if retry {
		wait = time.Minute // the line of 8 all start in the end
	}
	pool := NewPool(24<<20, wait)
	var (
		wg              sync.WaitGroup
		mu              sync.Mutex
		ok, refused     int
		peak            int64
		stop            = make(chan struct{})
		samplerFinished = make(chan struct{})
	)
	go func() {
		defer close(samplerFinished)
		for {
			u := pool.Used()
			mu.Lock()
			peak = max(peak, u)
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	for i := range 8 {
		wg.Go(func() {
			opts := Options{Alloc: alloc, BatchSize: 2048, Pool: pool}
			runOnce := run
			if retry {
				runOnce = func(t testing.TB, plan planner.Node, src catalog.Source, opts Options) ([][]any, error) {
					return runRequeued(t, plan, src, opts)
				}
			}
			rows, err := runOnce(t, plans[i%len(plans)], src, opts)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil && len(rows) == 60_000:
				ok++
			case serverExhausted(err):
				refused++
				if retry {
					t.Logf("query %d refused: %v", i, err)
				}
			default:
				t.Errorf("query %d: %d rows, err %v", i, len(rows), err)
			}
		})
	}
	wg.Wait()
	close(stop)
	<-samplerFinished
	t.Logf("%d answered, %d refused, peak reservation %d MiB of %d MiB", ok, refused, peak>>20, pool.Limit()>>20)
	if ok == 0 || retry && ok != 8 {
		t.Errorf("%d of 8 queries answered", ok)
	}
	if peak > pool.Limit() {
		t.Errorf("reservations reached %d bytes, over the %d-byte cap", peak, pool.Limit())
	}
	if u := pool.Used(); u != 0 {
		t.Errorf("pool still holds %d bytes", u)
	}
}
