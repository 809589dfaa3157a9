package transport

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/quarrydb/quarry/internal/testutil/syncbuf"
)

const stdioInit = `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
	`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"

// TestStdioPendingCap: requests beyond maxStdioPending (running or waiting
// for a slot) are answered at once with too_many_requests, whatever their
// method, without being run; once the held calls end, requests are served
// again.
func TestStdioPendingCap(t *testing.T) {
	s := server.NewMCPServer("t", "1", server.WithToolCapabilities(false))
	release := make(chan struct{})
	var ran sync.WaitGroup
	s.AddTool(mcp.NewTool("hold"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ran.Done()
		<-release
		return mcp.NewToolResultText("held"), nil
	})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- ServeStdioWith(context.Background(), s, inR, outW, StdioOptions{Logger: slog.New(slog.DiscardHandler)})
		outW.Close()
	}()
	type reply struct {
		ID    json.RawMessage `json:"id"`
		Error *struct {
			Code int `json:"code"`
			Data struct {
				Code string `json:"code"`
			} `json:"data"`
		} `json:"error"`
	}
	replies := make(chan reply, 2*maxStdioPending)
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var r reply
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Errorf("bad line %s", sc.Bytes())
			}
			replies <- r
		}
		close(replies)
	}()
	next := func() reply {
		select {
		case r, ok := <-replies:
			if !ok {
				t.Fatal("output closed")
			}
			return r
		case <-time.After(10 * time.Second):
			t.Fatal("no response")
		}
		return reply{}
	}
	send := func(s string) {
		if _, err := io.WriteString(inW, s); err != nil {
			t.Fatal(err)
		}
	}
	send(stdioInit)
	if r := next(); string(r.ID) != `"init"` || r.Error != nil {
		t.Fatalf("initialize: %+v", r)
	}
	ran.Add(maxStdioCalls)
	for i := range maxStdioPending {
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"hold","arguments":{}}}`+"\n", i))
	}
	ran.Wait() // the slots are full, the others wait: maxStdioPending pending
	const extra = 20
	for i := range extra {
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"x%d","method":"tools/call","params":{"name":"hold","arguments":{}}}`+"\n", i))
	}
	send(`{"jsonrpc":"2.0","id":"p","method":"ping"}` + "\n")
	for range extra + 1 {
		r := next()
		if r.Error == nil || r.Error.Code != rpcServerError || r.Error.Data.Code != codeTooManyInFlight || !strings.HasPrefix(string(r.ID), `"`) {
			t.Fatalf("request beyond the cap: %+v", r)
		}
	}
	ran.Add(maxStdioPending - maxStdioCalls)
	close(release)
	seen := map[string]bool{}
	for range maxStdioPending {
		r := next()
		if r.Error != nil {
			t.Fatalf("held call %s: %+v", r.ID, r.Error)
		}
		seen[string(r.ID)] = true
	}
	if len(seen) != maxStdioPending {
		t.Fatalf("%d distinct answers to %d held calls", len(seen), maxStdioPending)
	}
	send(`{"jsonrpc":"2.0","id":"p2","method":"ping"}` + "\n")
	if r := next(); string(r.ID) != `"p2"` || r.Error != nil {
		t.Fatalf("ping after the calls ended: %+v", r)
	}
	inW.Close()
	waitStdioEOF(t, done)
}

// TestStdioClientStopsReading: a client that sends requests with big
// answers and reads nothing. The server keeps at most maxStdioPending
// requests (goroutines) however many arrive, ends the session once a write
// has blocked for the write timeout, logs it once, cancels the running
// calls and returns ErrClientStoppedReading.
func TestStdioClientStopsReading(t *testing.T) {
	s := server.NewMCPServer("t", "1", server.WithToolCapabilities(false))
	big := strings.Repeat("x", 1<<20)
	s.AddTool(mcp.NewTool("big"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(big), nil
	})
	var logs syncbuf.Buffer
	inR, inW := io.Pipe()
	outR, outW := io.Pipe() // never read: every write blocks
	base := runtime.NumGoroutine()
	const timeout = 2 * time.Second
	done := make(chan error, 1)
	began := time.Now()
	go func() {
		done <- ServeStdioWith(context.Background(), s, inR, outW, StdioOptions{
			Logger: slog.New(slog.NewTextHandler(&logs, nil)), WriteTimeout: timeout})
	}()
	sent := make(chan int, 1)
	go func() { // as many requests as the server takes
		n := 0
		defer func() { sent <- n }()
		if _, err := io.WriteString(inW, stdioInit); err != nil {
			return
		}
		for ; n < 20_000; n++ {
			line := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"big","arguments":{}}}`+"\n", n)
			if n%2 == 1 {
				line = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`+"\n", n)
			}
			if _, err := io.WriteString(inW, line); err != nil {
				return
			}
		}
	}()
	peak := 0
	var err error
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(timeout + 20*time.Second)
wait:
	for {
		select {
		case err = <-done:
			break wait
		case <-tick.C:
			peak = max(peak, runtime.NumGoroutine()-base)
		case <-deadline:
			t.Fatal("the session did not end")
		}
	}
	elapsed := time.Since(began)
	inR.Close()  // the client's writes fail from here
	outR.Close() // and the abandoned write returns
	n := <-sent
	if !errors.Is(err, ErrClientStoppedReading) {
		t.Fatalf("ServeStdioWith: %v, want ErrClientStoppedReading", err)
	}
	if elapsed < timeout {
		t.Errorf("the session ended after %v, before the write timeout %v", elapsed, timeout)
	}
	if c := strings.Count(logs.String(), "client stopped reading"); c != 1 {
		t.Errorf("%d log lines about the client, want 1:\n%s", c, logs.String())
	}
	if limit := maxStdioPending + 64; peak > limit {
		t.Errorf("%d goroutines more than before the session (requests sent: %d), want at most %d", peak, n, limit)
	}
	t.Logf("requests sent %d, goroutines at most +%d, session ended after %v", n, peak, elapsed.Round(time.Millisecond))
}
