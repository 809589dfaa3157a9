package e2e

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestResourceSubscriptionsListen: a 2026-07-28 client (mcp-go, stateless
// Streamable HTTP) that opened a subscriptions/listen stream naming a
// dataset's schema card and the catalog in resourceSubscriptions gets
// notifications/resources/updated for both, tagged with the subscription
// id, when the dataset's file is replaced; nothing before a change; and
// nothing more once it closed the stream.
func TestResourceSubscriptionsListen(t *testing.T) {
	// Mostly waiting for catalog polls: it runs beside the other
	// subscription test once the serial tests are done, with its own
	// data root and artifact directory.
	t.Parallel()
	root := t.TempDir()
	write := func(name, body string) { replaceFile(t, root, name, body) } // an atomic replacement
	write("a.csv", "x,y\n1,2\n")
	p := launchHTTP(t, nil, "--data", root, "--artifact-dir", t.TempDir())
	c := connectHTTP(t, p.base, nil, false) // 2026-07-28

	const schema, catalog = "quarry://datasets/a/schema", "quarry://catalog"
	var mu sync.Mutex
	updated, untagged := map[string]int{}, 0
	acked := make(chan mcp.SubscriptionFilter, 1)
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		mu.Lock()
		defer mu.Unlock()
		if n.Params.Meta[mcp.MetaKeySubscriptionID] == nil {
			untagged++
		}
		switch n.Method {
		case string(mcp.MethodNotificationResourceUpdated):
			if uri, ok := n.Params.AdditionalFields["uri"].(string); ok {
				updated[uri]++
			}
		case string(mcp.MethodNotificationSubscriptionsAcknowledged):
			var f mcp.SubscriptionFilter
			if m, ok := n.Params.AdditionalFields["notifications"].(map[string]any); ok {
				for _, u := range m["resourceSubscriptions"].([]any) {
					f.ResourceSubscriptions = append(f.ResourceSubscriptions, u.(string))
				}
			}
			acked <- f
		}
	})
	count := func(uri string) int {
		mu.Lock()
		defer mu.Unlock()
		return updated[uri]
	}
	stop, err := c.ListenAsync(context.Background(), mcp.SubscriptionFilter{ResourceSubscriptions: []string{schema, catalog}},
		func(err error) { t.Errorf("listen: %v", err) })
	if err != nil {
		t.Fatal(err)
	}
	select {
	case f := <-acked:
		if len(f.ResourceSubscriptions) != 2 {
			t.Fatalf("acknowledged %+v", f)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no subscriptions/acknowledged")
	}
	time.Sleep(2500 * time.Millisecond) // one poll without changes: nothing is sent
	if n := count(schema) + count(catalog); n != 0 {
		t.Fatalf("notifications without a change: %v", updated)
	}

	write("a.csv", "x,y\n1,2\n3,4\n")
	deadline := time.Now().Add(30 * time.Second)
	for count(schema) != 1 || count(catalog) != 1 {
		if time.Now().After(deadline) {
			mu.Lock()
			defer mu.Unlock()
			t.Fatalf("a.csv replaced: %v in 30 s", updated)
		}
		time.Sleep(50 * time.Millisecond)
	}
	mu.Lock()
	if untagged != 0 {
		t.Errorf("%d notifications on the listen stream without the subscription id", untagged)
	}
	mu.Unlock()

	stop() // closes the stream: the server drops its subscriptions
	write("a.csv", "x,y\n5,6\n")
	time.Sleep(5 * time.Second) // two polls later
	if count(schema) != 1 || count(catalog) != 1 {
		t.Fatalf("notified after the stream closed: %v", updated)
	}
}
