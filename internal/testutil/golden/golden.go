// Package golden compares what a test produced with a golden file (a
// snapshot, a generated document) and rewrites the file instead when the
// test runs with its package's -update flag. Only tests import it.
package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Check compares got with the file at path: a missing file or any
// difference fails t (not fatally), the message showing the lines that
// differ. With update it writes got to path instead (creating the
// directory), so `go test ./pkg -update` regenerates the golden files;
// each package declares its own -update flag and passes its value.
func Check[T ~string | ~[]byte](t testing.TB, path string, got T, update bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("missing golden file (rerun the test with -update to write it): %v", err)
		return
	}
	if string(want) != string(got) {
		t.Errorf("%s differs from what the test produced (if that is intended, rerun the test with -update and review the diff):\n%s",
			path, Diff(string(want), string(got)))
	}
}

// maxDiffLines and maxLineBytes cap what Diff shows of each side.
const (
	maxDiffLines = 40
	maxLineBytes = 300
)

// Diff describes how got differs from want by lines, as one hunk of a
// unified diff without context: the run of lines between the common
// leading and trailing ones, "-" for want's and "+" for got's, at most
// maxDiffLines of each (long lines cut). Equal texts give "".
func Diff(want, got string) string {
	if want == got {
		return ""
	}
	w, g := lines(want), lines(got)
	pre := 0
	for pre < len(w) && pre < len(g) && w[pre] == g[pre] {
		pre++
	}
	suf := 0
	for suf < len(w)-pre && suf < len(g)-pre && w[len(w)-1-suf] == g[len(g)-1-suf] {
		suf++
	}
	var b strings.Builder
	fmt.Fprintf(&b, "@@ -%d,%d +%d,%d @@\n", pre+1, len(w)-pre-suf, pre+1, len(g)-pre-suf)
	side(&b, "-", w[pre:len(w)-suf])
	side(&b, "+", g[pre:len(g)-suf])
	return b.String()
}

// lines splits s after each newline (a final newline ends the last line,
// it does not start an empty one).
func lines(s string) []string {
	l := strings.SplitAfter(s, "\n")
	if l[len(l)-1] == "" {
		l = l[:len(l)-1]
	}
	return l
}

// side writes lines with mark in front, at most maxDiffLines of them,
// each cut at maxLineBytes; a last line without a newline says so.
func side(b *strings.Builder, mark string, ls []string) {
	for i, l := range ls {
		if i == maxDiffLines {
			fmt.Fprintf(b, "%s … %d more lines\n", mark, len(ls)-i)
			return
		}
		text, ok := strings.CutSuffix(l, "\n")
		if len(text) > maxLineBytes {
			text = strings.ToValidUTF8(text[:maxLineBytes], "") + " …"
		}
		if !ok {
			text += " (no newline at the end)"
		}
		b.WriteString(mark + text + "\n")
	}
}
