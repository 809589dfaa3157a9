package flightsql_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"github.com/quarrydb/quarry/flightsql"
	"github.com/quarrydb/quarry/internal/app"
	"github.com/quarrydb/quarry/mcpapi/transport"
)

// TestRateAndConcurrencyLimits: the HTTP transport's per-principal rate
// limit and in-flight cap (transport.Limiter) apply to Flight SQL calls:
// a principal over its budget gets RESOURCE_EXHAUSTED with a retry-after
// header, another principal is not affected, and a slot comes back when
// its call ends.
func TestRateAndConcurrencyLimits(t *testing.T) {
	const alice, bob = "alice-secret-alice-secret-alice-0", "bob-secret-bob-secret-bob-secret-0"
	tokens := []transport.Token{{Principal: "alice", Secret: alice}, {Principal: "bob", Secret: bob}}
	root := demoRoot(t, "weather/daily", "weather/stations")
	const small = `SELECT count(*) FROM "weather/stations"`

	t.Run("rate", func(t *testing.T) {
		f := startFacadeWith(t, app.Config{Data: root}, tokens, func(o *flightsql.Options) {
			o.Limits = transport.NewLimiter(1, 2, 0)
		})
		c := f.client(t, "")
		ctx := withToken(context.Background(), alice)
		// 10 calls at once: 2 from the burst, one more within the second a
		// call may wait, the rest refused.
		const n = 10
		errs, mds := make([]error, n), make([]metadata.MD, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { _, errs[i] = c.Execute(ctx, small, grpc.Header(&mds[i])) })
		}
		wg.Wait()
		refused := -1
		for i, err := range errs {
			if err != nil {
				if codeOf(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "rate_limited") {
					t.Fatalf("call %d: %v, want RESOURCE_EXHAUSTED rate_limited", i, err)
				}
				refused = i
			}
		}
		if refused < 0 {
			t.Fatalf("%d calls at once at 1/s with a burst of 2: none refused", n)
		}
		if v := mds[refused].Get("retry-after"); len(v) != 1 || v[0] == "0" || strings.Trim(v[0], "0123456789") != "" {
			t.Errorf("retry-after %v", v)
		}
		if _, err := c.Execute(withToken(context.Background(), bob), small); err != nil {
			t.Fatalf("another principal: %v", err)
		}
		if !strings.Contains(f.logs.String(), "reason=rate_limited") {
			t.Errorf("the refusal is not logged:\n%s", f.logs.String())
		}
	})

	t.Run("in flight", func(t *testing.T) {
		f := startFacadeWith(t, app.Config{Data: root}, tokens, func(o *flightsql.Options) {
			o.Limits = transport.NewLimiter(0, 0, 1)
		})
		c := f.client(t, "")
		ctx := withToken(context.Background(), alice)
		// A big result not read: its DoGet holds alice's only slot.
		info, err := c.Execute(ctx, `SELECT a.tmax_c, b.tmin_c FROM "weather/daily" a CROSS JOIN "weather/daily" b`)
		if err != nil {
			t.Fatal(err)
		}
		streamCtx, cancel := context.WithCancel(ctx)
		rdr, err := c.DoGet(streamCtx, info.Endpoint[0].Ticket)
		if err != nil {
			t.Fatal(err)
		}
		if !rdr.Next() {
			t.Fatalf("no first batch: %v", rdr.Err())
		}
		if _, err := c.Execute(ctx, small); codeOf(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "too_many_in_flight") {
			t.Fatalf("a second call in flight: %v, want RESOURCE_EXHAUSTED too_many_in_flight", err)
		}
		if _, err := c.Execute(withToken(context.Background(), bob), small); err != nil {
			t.Fatalf("another principal: %v", err)
		}
		cancel()
		rdr.Release()
		deadline := time.Now().Add(10 * time.Second)
		for {
			_, err := c.Execute(ctx, small)
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the slot never came back: %v", err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
}
