package artifacts

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// crashChildEnv, when set, makes TestCrashedWriterCleanedOnOpen act as the
// child: a writer that writes into the store directory until it is killed.
const crashChildEnv = "QUARRY_ARTIFACTS_CRASH_CHILD_DIR"

// TestCrashedWriterCleanedOnOpen runs a writer in a subprocess (this test
// binary again), kills it with SIGKILL in the middle of writing, and checks
// that the partial file never becomes visible as an artifact, that a store
// opened while the writer lived left its temp file alone, and that a store
// opened after the crash deletes it at once. The child also holds a
// TempDir (a join's spill partitions) with a file in it: spared while the
// child lives, deleted with its contents after the crash.
func TestCrashedWriterCleanedOnOpen(t *testing.T) {
	if dir := os.Getenv(crashChildEnv); dir != "" {
		crashChild(dir)
		return
	}
	if !locksSupported {
		t.Skip("no file locks on this system: crashed temp files are cleaned by age (StaleTempAge)")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashedWriterCleanedOnOpen$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	t.Cleanup(func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "WRITING ") {
				ready <- strings.TrimPrefix(sc.Text(), "WRITING ")
				return
			}
		}
		close(ready)
	}()
	var tmp, spillDir string
	select {
	case tmp = <-ready:
		tmp, spillDir, _ = strings.Cut(tmp, "\t")
	case <-time.After(30 * time.Second):
		t.Fatal("child writer did not start")
	}
	if tmp == "" {
		t.Fatal("child writer exited")
	}
	// Let it write some more, then check that a store opened meanwhile (with
	// a clock far ahead, so age alone would condemn the file) spares it.
	waitGrow(t, tmp, 1<<20)
	later := func() time.Time { return time.Now().Add(time.Hour) }
	s1, err := Open(Options{Dir: dir, Now: later})
	if err != nil {
		t.Fatal(err)
	}
	s1.Close()
	if !exists(tmp) {
		t.Fatal("a store deleted the temp file of a live writer")
	}
	if !exists(filepath.Join(spillDir, "part-00.arrows")) {
		t.Fatal("a store deleted the spill directory of a live join")
	}
	if l := s1.List(); len(l) != 0 {
		t.Fatalf("partial artifact visible: %+v", l)
	}

	// Crash in the middle of writing.
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	killed = true
	if !exists(tmp) || !exists(spillDir) {
		t.Fatal("temp file or spill directory vanished with the writer: the test proves nothing")
	}

	// The next start cleans the garbage.
	s2, err := Open(Options{Dir: dir, Now: func() time.Time { return time.Now().Add(time.Minute) }})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if exists(tmp) {
		t.Fatal("crashed writer's temp file survived Open")
	}
	if exists(spillDir) {
		t.Fatal("crashed join's spill directory survived Open")
	}
	if l := s2.List(); len(l) != 0 {
		t.Fatalf("partial artifact visible: %+v", l)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 0 {
		t.Fatalf("directory not clean: %v", ents)
	}
}

// crashChild writes into an artifact forever (until killed).
func crashChild(dir string) {
	s, err := Open(Options{Dir: dir})
	if err != nil {
		panic(err)
	}
	w, err := s.Create("parquet", "")
	if err != nil {
		panic(err)
	}
	chunk := bytes.Repeat([]byte("partial!"), 8<<10)
	if _, err := w.Write(chunk); err != nil {
		panic(err)
	}
	td, err := MkdirTemp(s.Dir(), "join-spill-")
	if err != nil {
		panic(err)
	}
	if err := os.WriteFile(filepath.Join(td.Path, "part-00.arrows"), chunk, 0o600); err != nil {
		panic(err)
	}
	os.Stdout.WriteString("WRITING " + filepath.Join(s.Dir(), filepath.Base(w.f.Name())) + "\t" + td.Path + "\n")
	for {
		if _, err := w.Write(chunk); err != nil {
			panic(err)
		}
		time.Sleep(time.Millisecond)
	}
}

func waitGrow(t *testing.T, path string, size int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if fi, err := os.Stat(path); err == nil && fi.Size() >= size {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("%s did not grow to %d bytes", path, size)
}
