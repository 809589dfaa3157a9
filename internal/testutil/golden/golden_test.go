package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that keeps the failures instead of failing.
type recorder struct {
	testing.TB
	failures []string
}

func (r *recorder) Helper()                   {}
func (r *recorder) Fatal(a ...any)            { r.failures = append(r.failures, fmt.Sprint(a...)) }
func (r *recorder) Errorf(f string, a ...any) { r.failures = append(r.failures, fmt.Sprintf(f, a...)) }

// TestCheck: -update writes the file (and its directory), the same text
// then passes, another text or a missing file fails with a message that
// names -update and shows the differing lines; the file is left alone.
func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "x.golden")
	cases := []struct {
		name   string
		got    string
		update bool
		fails  []string // parts of the one failure; none: passes
	}{
		{"missing", "a\nb\n", false, []string{"missing golden file", "-update"}},
		{"update", "a\nb\nc\n", true, nil},
		{"same", "a\nb\nc\n", false, nil},
		{"changed", "a\nB\nc\n", false, []string{path, "-update", "@@ -2,1 +2,1 @@\n-b\n+B\n"}},
		{"longer", "a\nb\nc\nd\n", false, []string{"@@ -4,0 +4,1 @@\n+d\n"}},
	}
	for _, c := range cases {
		r := &recorder{TB: t}
		Check(r, path, c.got, c.update)
		switch {
		case c.fails == nil && len(r.failures) > 0:
			t.Errorf("%s: failed: %q", c.name, r.failures)
		case c.fails != nil && len(r.failures) != 1:
			t.Errorf("%s: %d failures %q, want 1", c.name, len(r.failures), r.failures)
		case c.fails != nil:
			for _, part := range c.fails {
				if !strings.Contains(r.failures[0], part) {
					t.Errorf("%s: failure %q does not say %q", c.name, r.failures[0], part)
				}
			}
		}
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "a\nb\nc\n" {
		t.Fatalf("golden file %q (%v), want what -update wrote", b, err)
	}
	r := &recorder{TB: t}
	Check(r, path, []byte("a\nb\nc\n"), false) // bytes as well as strings
	if len(r.failures) != 0 {
		t.Errorf("bytes: %q", r.failures)
	}
}

func TestDiff(t *testing.T) {
	var many strings.Builder
	for i := range 100 {
		fmt.Fprintf(&many, "%d\n", i)
	}
	capped := "@@ -1,0 +1,100 @@\n"
	for i := range 40 {
		capped += fmt.Sprintf("+%d\n", i)
	}
	capped += "+ … 60 more lines\n"
	cases := []struct{ name, want, got, diff string }{
		{"equal", "a\nb\n", "a\nb\n", ""},
		{"middle", "a\nb\nc\n", "a\nx\ny\nc\n", "@@ -2,1 +2,2 @@\n-b\n+x\n+y\n"},
		{"newline", "a\nb\n", "a\nb", "@@ -2,1 +2,1 @@\n-b\n+b (no newline at the end)\n"},
		{"long line", "a\n", strings.Repeat("é", 200) + "\n", "@@ -1,1 +1,1 @@\n-a\n+" + strings.Repeat("é", 150) + " …\n"},
		{"capped", "", many.String(), capped},
	}
	for _, c := range cases {
		if d := Diff(c.want, c.got); d != c.diff {
			t.Errorf("%s: Diff\n%s\nwant\n%s", c.name, d, c.diff)
		}
	}
}
