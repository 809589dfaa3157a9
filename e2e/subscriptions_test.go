package e2e

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// TestResourceSubscriptions: a 2025-11-25 client subscribed to a dataset's
// schema card and to the catalog card gets notifications/resources/updated
// for each when the dataset's file is replaced, for the catalog only when
// a file is added, and nothing for the schema after unsubscribing.
func TestResourceSubscriptions(t *testing.T) {
	// Mostly waiting for catalog polls: it runs beside the other
	// subscription test once the serial tests are done, with its own
	// data root and artifact directory.
	t.Parallel()
	root := t.TempDir()
	write := func(name, body string) { replaceFile(t, root, name, body) } // an atomic replacement
	write("a.csv", "x,y\n1,2\n")
	p := launchHTTP(t, nil, "--data", root, "--artifact-dir", t.TempDir())

	//lint:ignore SA1019 the 2025-11-25 protocol delivers resource updates over the standalone GET stream this option opens
	tr, err := transport.NewStreamableHTTP(p.base+"/mcp", transport.WithHTTPTimeout(60*time.Second), transport.WithContinuousListening())
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr, client.WithProtocolVersion(mcp.LATEST_LEGACY_PROTOCOL_VERSION))
	var mu sync.Mutex
	updated := map[string]int{}
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationResourceUpdated) {
			if uri, ok := n.Params.AdditionalFields["uri"].(string); ok {
				mu.Lock()
				updated[uri]++
				mu.Unlock()
			}
		}
	})
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "quarry-e2e", Version: "1"}
	res, err := c.Initialize(ctx, init)
	if err != nil {
		t.Fatal(err)
	}
	if res.Capabilities.Resources == nil || !res.Capabilities.Resources.Subscribe {
		t.Fatalf("resources.subscribe not declared: %+v", res.Capabilities.Resources)
	}
	const schema, catalog = "quarry://datasets/a/schema", "quarry://catalog"
	for _, uri := range []string{schema, catalog} {
		req := mcp.SubscribeRequest{}
		req.Params.URI = uri
		//lint:ignore SA1019 resources/subscribe is the 2025-11-25 way, the one Quarry delivers updates for
		if err := c.Subscribe(ctx, req); err != nil {
			t.Fatalf("subscribe %s: %v", uri, err)
		}
	}
	count := func(uri string) int {
		mu.Lock()
		defer mu.Unlock()
		return updated[uri]
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				mu.Lock()
				defer mu.Unlock()
				t.Fatalf("%s: no notification in 30 s (got %v)", what, updated)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	time.Sleep(2500 * time.Millisecond) // one poll without changes: nothing is sent
	if n := count(schema) + count(catalog); n != 0 {
		t.Fatalf("notifications without a change: %v", updated)
	}

	write("a.csv", "x,y\n1,2\n3,4\n")
	waitFor("a.csv replaced", func() bool { return count(schema) == 1 && count(catalog) == 1 })

	write("b.csv", "z\n9\n")
	waitFor("b.csv added", func() bool { return count(catalog) == 2 })
	if count(schema) != 1 {
		t.Fatalf("schema of a notified for a new b.csv: %v", updated)
	}

	req := mcp.UnsubscribeRequest{}
	req.Params.URI = schema
	//lint:ignore SA1019 resources/unsubscribe is the 2025-11-25 way
	if err := c.Unsubscribe(ctx, req); err != nil {
		t.Fatal(err)
	}
	write("a.csv", "x,y\n5,6\n")
	waitFor("a.csv replaced again", func() bool { return count(catalog) == 3 })
	time.Sleep(2500 * time.Millisecond) // a full poll later
	if count(schema) != 1 {
		t.Fatalf("schema notified after unsubscribe: %v", updated)
	}
}
