// Package s3rvertest starts a real S3-compatible server for tests: npm's
// s3rver (pinned in interop/s3rver/package-lock.json, installed with npm
// ci on first use), on a loopback port, with one bucket.
package s3rvertest

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Credentials s3rver accepts (its defaults).
const (
	AccessKey = "S3RVER"
	SecretKey = "S3RVER"
)

// Bucket is the bucket every server starts with.
const Bucket = "quarry"

// Env is the environment a client of the server needs (AWS credentials
// and region), as KEY=value pairs.
func Env() []string {
	return []string{"AWS_ACCESS_KEY_ID=" + AccessKey, "AWS_SECRET_ACCESS_KEY=" + SecretKey, "AWS_REGION=us-east-1"}
}

// SetEnv sets Env for the test (not for parallel tests).
func SetEnv(t testing.TB) {
	for _, kv := range Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
}

var install struct {
	once sync.Once
	err  error
}

// dir is interop/s3rver in this module.
func dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "interop", "s3rver")
}

// Server is a running s3rver.
type Server struct {
	// Endpoint is its URL, http://127.0.0.1:PORT.
	Endpoint string
	cmd      *exec.Cmd
	cancel   context.CancelFunc
}

// Stop kills the server (an unreachable store from then on).
func (s *Server) Stop() {
	s.cancel()
	_ = s.cmd.Wait()
}

// Start runs s3rver until the test ends. Node.js 20+ and npm are
// required (make test installs them): their absence fails the test.
func Start(t testing.TB) *Server {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("this test needs Node.js 20+ and npm on PATH (make test installs them)")
	}
	d := dir()
	main := filepath.Join(d, "node_modules", "s3rver", "bin", "s3rver.js")
	install.once.Do(func() {
		// Test binaries of several packages start s3rver at the same time
		// on a fresh clone: one installs (under a lock across processes)
		// while the others wait, and the install counts only once its
		// marker is written (a half-extracted node_modules does not).
		unlock, err := lockInstall(d)
		if err != nil {
			install.err = err
			return
		}
		defer unlock()
		marker := filepath.Join(d, "node_modules", ".quarry-installed")
		if _, err := os.Stat(marker); err == nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "npm", "ci", "--prefix", d, "--no-audit", "--no-fund", "--loglevel", "error")
		if out, err := cmd.CombinedOutput(); err != nil {
			install.err = fmt.Errorf("npm ci --prefix %s: %v\n%s", d, err, out)
			return
		}
		install.err = os.WriteFile(marker, nil, 0o644)
	})
	if install.err != nil {
		t.Fatal(install.err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, node, main, "--address", "127.0.0.1", "--port", fmt.Sprint(port),
		"--directory", t.TempDir(), "--configure-bucket", Bucket)
	out, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	s := &Server{Endpoint: fmt.Sprintf("http://127.0.0.1:%d", port), cmd: cmd, cancel: cancel}
	t.Cleanup(s.Stop)
	var log strings.Builder
	var mu sync.Mutex
	go func() { // drain, so the server never blocks on its output
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			mu.Lock()
			log.WriteString(sc.Text() + "\n")
			mu.Unlock()
		}
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			c.Close()
			return s
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			mu.Lock()
			defer mu.Unlock()
			t.Fatalf("s3rver did not start: %v\n%s", err, log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
