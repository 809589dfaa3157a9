package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// nodeInstalls are the npm installs done by this test binary, by
// interop/ directory.
var nodeInstalls sync.Map // dir -> *nodeInstall

type nodeInstall struct {
	once sync.Once
	err  error
}

// nodeScript runs interop/<pkg>/<script> with args and returns its
// standard output. The first call for pkg installs its pinned lockfile
// (npm ci, once; skipped when the file installed, relative to the
// package directory, exists). Node.js 20+ and npm are required: CI has
// them, so their absence fails the test.
func nodeScript(t *testing.T, pkg, installed, script string, args ...string) []byte {
	t.Helper()
	node, dir := nodePackage(t, pkg, installed)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // the SQL corpus (165 queries) took 45 s at load 33 and over 2 min at load 45
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{filepath.Join(dir, script)}, args...)...)
	cmd.Env = env()
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s %s: %v\n%s\n%s", script, strings.Join(args, " "), err, out, stderr.String())
	}
	return out
}

// nodePackage returns the node binary and the absolute directory of
// interop/<pkg>, after installing its pinned lockfile (npm ci, once per
// test binary; skipped when the file installed, relative to the package
// directory, exists). Node.js 20+ and npm are required: CI has them, so
// their absence fails the test.
func nodePackage(t *testing.T, pkg, installed string) (node, dir string) {
	t.Helper()
	node, nodeErr := exec.LookPath("node")
	npm, npmErr := exec.LookPath("npm")
	if nodeErr != nil || npmErr != nil {
		t.Fatalf("interop/%s needs Node.js 20+ and npm on PATH (node: %v, npm: %v)", pkg, nodeErr, npmErr)
	}
	dir, err := filepath.Abs(filepath.Join("..", "interop", pkg))
	if err != nil {
		t.Fatal(err)
	}
	v, _ := nodeInstalls.LoadOrStore(dir, &nodeInstall{})
	in := v.(*nodeInstall)
	in.once.Do(func() {
		if _, err := os.Stat(filepath.Join(dir, installed)); err == nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		// npm ci installs exactly package-lock.json and never rewrites it.
		cmd := exec.CommandContext(ctx, npm, "ci", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel", "error")
		cmd.Env = env()
		if out, err := cmd.CombinedOutput(); err != nil {
			in.err = fmt.Errorf("npm ci --prefix %s: %v\n%s", dir, err, out)
		}
	})
	if in.err != nil {
		t.Fatal(in.err)
	}
	return node, dir
}
