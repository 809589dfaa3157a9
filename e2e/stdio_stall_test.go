package e2e

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quarrydb/quarry/internal/testutil/syncbuf"
)

// TestStdioClientStopsReading: a client of `quarry serve` (stdio) sends
// requests whose answers are big (inline query results, catalog reads) as
// fast as the server takes them and never reads its stdout. The server
// must keep its memory bounded (it stops taking requests beyond its cap,
// answering the excess with too_many_requests, and holds at most a slot's
// worth of answers), then, once a write has blocked for --write-timeout,
// log "client stopped reading" once and exit with an error; no crash.
func TestStdioClientStopsReading(t *testing.T) {
	const writeTimeout = 3 * time.Second
	cmd := exec.Command(binary, "serve", "--log-level", "warn", "--write-timeout", writeTimeout.String())
	cmd.Env = env()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe() // never read
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncbuf.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = in.Close()
		_ = out.Close()
		if t.Failed() {
			t.Logf("server stderr:\n%s", stderr.String())
		}
	})
	pid := cmd.Process.Pid
	send := func(s string) error {
		_, err := io.WriteString(in, s+"\n")
		return err
	}
	if err := send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`); err != nil {
		t.Fatal(err)
	}
	_ = send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	time.Sleep(500 * time.Millisecond) // the catalog scan of the demo data starts
	base := procMiB(pid, "VmRSS")
	sent := make(chan int, 1)
	go func() {
		n := 1
		defer func() { sent <- n }()
		for ; n < 200_000; n++ {
			var line string
			switch n % 3 {
			case 0, 1: // an inline result of the widest demo table, up to the inline caps
				line = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"query_data","arguments":{"dataset":"survey/wide","limit":200}}}`, n)
			case 2:
				line = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"resources/read","params":{"uri":"quarry://catalog"}}`, n)
			}
			if send(line) != nil {
				return // the server exited
			}
		}
	}()
	peak := base
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(writeTimeout + 60*time.Second)
	began := time.Now()
	var waitErr error
wait:
	for {
		select {
		case waitErr = <-exited:
			break wait
		case <-tick.C:
			peak = max(peak, procMiB(pid, "VmHWM"))
		case <-deadline:
			t.Fatalf("the server did not end the session within %v of a client that stopped reading", writeTimeout+60*time.Second)
		}
	}
	elapsed := time.Since(began)
	_ = in.Close()
	n := <-sent
	var ee *exec.ExitError
	if !errors.As(waitErr, &ee) || ee.ExitCode() <= 0 {
		t.Errorf("exit: %v, want an error exit (the session was ended)", waitErr)
	}
	logs := stderr.String()
	if c := strings.Count(logs, "client stopped reading: ending the stdio session"); c != 1 {
		t.Errorf("%d warnings about the client, want 1", c)
	}
	for _, bad := range []string{"panic", "fatal error", "DATA RACE"} {
		if strings.Contains(logs, bad) {
			t.Errorf("stderr has %q", bad)
		}
	}
	// The answers held are bounded by the slots (16 tool calls and 16 other
	// requests, each answer at most the inline caps or a catalog page),
	// the requests by the pending cap; without the bounds the server takes
	// every request sent and holds a goroutine and an answer for each.
	const growth = 128
	if peak > base+growth {
		t.Errorf("peak RSS %d MiB, %d MiB after start-up: more than %d MiB growth (%d requests sent)", peak, base, growth, n)
	}
	t.Logf("%d requests sent before the server stopped reading them; RSS %d MiB after start-up, peak %d MiB; exited after %v",
		n, base, peak, elapsed.Round(time.Millisecond))
}

// procMiB is a memory figure (VmRSS, VmHWM) of process pid in MiB.
func procMiB(pid int, field string) int {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, field+":"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return kb >> 10
		}
	}
	return 0
}
