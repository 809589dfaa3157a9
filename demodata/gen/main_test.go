package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommittedFilesAreUpToDate regenerates the demo data and compares it
// with demodata/files (gzip files by content, since compressed bytes may
// differ between Go versions).
func TestCommittedFilesAreUpToDate(t *testing.T) {
	out := t.TempDir()
	if err := generate(out, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, d := range datasets {
		got := read(t, filepath.Join(out, filepath.FromSlash(d.path)))
		want := read(t, filepath.Join("..", "files", filepath.FromSlash(d.path)))
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the generator's output; run go run ./demodata/gen", d.path)
		}
	}
}

func read(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(p, ".gz") {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if b, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
	}
	return b
}
