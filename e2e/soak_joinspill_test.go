//go:build soak

package e2e

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestSoakJoinSpill (make soak; build tag soak): a join whose build side
// (QUARRY_SOAK_JOIN_BUILD rows, default 5,000,000, with a 24-character
// string column the query needs) is several times `--query-memory 128MiB`
// completes by spilling (quarry_spill_bytes_total{kind="join"} grows) with
// the right answer, and the server's peak RSS (VmHWM) stays within the
// budgets (query memory + cache memory + handle memory) + 10% over the
// process's own footprint (the RSS of the same server over an empty folder:
// binary, libraries, runtime) — issue #13's memory target for spilling joins.
// QUARRY_SOAK_ENV=NAME=value passes one variable to the server.
func TestSoakJoinSpill(t *testing.T) {
	build, probe := 5_000_000, 8_000_000
	if v := os.Getenv("QUARRY_SOAK_JOIN_BUILD"); v != "" {
		build, _ = strconv.Atoi(v)
		probe = build * 8 / 5
	}
	const queryMiB, cacheMiB, handleMiB = 128, 64, 16
	data := t.TempDir()
	writeCSV(t, filepath.Join(data, "dims.csv"), "b,p,name", build, func(w *bufio.Writer, i int) {
		b := int64(i) * 7919 % int64(build)
		fmt.Fprintf(w, "%d,%d,name-%019d\n", b, b%1000, b)
	})
	var wantSum int64
	writeCSV(t, filepath.Join(data, "facts.csv"), "k,v", probe, func(w *bufio.Writer, i int) {
		k := int64(i) * 104729 % int64(build)
		wantSum += k % 1000
		fmt.Fprintf(w, "%d,%d\n", k, i)
	})
	// The process's own footprint: the same server over an empty folder.
	empty := launchHTTP(t, envList(os.Getenv("QUARRY_SOAK_ENV")), "--data", t.TempDir(), "--artifact-dir", t.TempDir())
	var none map[string]any
	call(t, connectHTTP(t, empty.base, nil, false), "get_catalog", map[string]any{}, &none)
	idle := procMiB(empty.cmd.Process.Pid, "VmRSS")
	empty.signal(t, os.Interrupt)
	empty.waitExit(t, 10*time.Second)
	p := launchHTTP(t, envList(os.Getenv("QUARRY_SOAK_ENV")), "--data", data, "--artifact-dir", t.TempDir(), "--query-memory", fmt.Sprint(queryMiB<<20),
		"--server-memory", fmt.Sprint(queryMiB<<20), "--cache-memory", fmt.Sprint(cacheMiB<<20),
		"--handle-memory", fmt.Sprint(handleMiB<<20), "--query-timeout", "20m")
	pid := p.cmd.Process.Pid
	c := connectHTTP(t, p.base, nil, false)
	var cat map[string]any
	call(t, c, "get_catalog", map[string]any{}, &cat) // the scan is done before the measured query
	base := procMiB(pid, "VmRSS")
	_, before := scrape(t, p.base, nil)
	peak := sampleHWM(pid)
	began := time.Now()
	var r queryResult
	call(t, c, "advanced_query", map[string]any{"sql": `SELECT count(*) AS n, sum(d.p) AS s, sum(length(d.name)) AS l FROM facts f JOIN dims d ON f.k = d.b`}, &r)
	hwm := peak()
	_, after := scrape(t, p.base, nil)
	spilled := after[`quarry_spill_bytes_total{kind="join"}`] - before[`quarry_spill_bytes_total{kind="join"}`]
	num := func(k string) float64 { v, _ := r.Data[0][k].(float64); return v }
	if len(r.Data) != 1 || num("n") != float64(probe) || num("s") != float64(wantSum) || num("l") != float64(probe*24) {
		t.Errorf("answer %v, want n=%d s=%d l=%d", r.Data, probe, wantSum, probe*24)
	}
	bound := idle + (queryMiB+cacheMiB+handleMiB)*11/10
	t.Logf("join of %d x %d rows in %v: %.0f MiB spilled; RSS idle %d MiB, before the query %d MiB, peak %d MiB (bound: idle + 110%% of query %d + cache %d + handle %d MiB = %d MiB)",
		probe, build, time.Since(began).Round(time.Millisecond), spilled/(1<<20), idle, base, hwm, queryMiB, cacheMiB, handleMiB, bound)
	if spilled <= 0 {
		t.Errorf("the join did not spill (quarry_spill_bytes_total{kind=\"join\"} did not grow)")
	}
	if hwm > bound {
		t.Errorf("peak RSS %d MiB > %d MiB", hwm, bound)
	}
}

// writeCSV writes a header and rows lines written by line(w, i).
func writeCSV(t *testing.T, path, header string, rows int, line func(w *bufio.Writer, i int)) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString(header + "\n")
	for i := range rows {
		line(w, i)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// sampleHWM samples process pid's peak RSS (VmHWM) every 100 ms until the
// returned function is called, which returns the highest value in MiB.
func sampleHWM(pid int) func() int {
	peak := make(chan int)
	stop := make(chan struct{})
	go func() {
		hwm := 0
		for {
			hwm = max(hwm, procMiB(pid, "VmHWM"))
			select {
			case <-stop:
				peak <- hwm
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return func() int { close(stop); return <-peak }
}

func envList(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}
