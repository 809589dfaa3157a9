//go:build unix

package catalog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quarrydb/quarry/internal/qerr"
)

// TestReadCardConfined: a schema card that is a symlink (to a file outside
// the root) by the time it is read is refused, never parsed.
func TestReadCardConfined(t *testing.T) {
	root, out := t.TempDir(), t.TempDir()
	secret := filepath.Join(out, "secret.json")
	if err := os.WriteFile(secret, []byte(`{"description": "SECRET"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, "a.csv"+CardSuffix)
	if err := os.Symlink(secret, p); err != nil {
		t.Fatal(err)
	}
	card, err := readCard(FileInfo{AbsPath: p, RelPath: filepath.Base(p), Root: root, Size: 10})
	if card != nil || err == nil || !strings.Contains(err.Error(), "symbolic link") || strings.Contains(err.Error(), "SECRET") {
		t.Fatalf("readCard = %v, %v", card, err)
	}
	if _, err := (FileInfo{AbsPath: p, RelPath: "x", Root: root}).Open(); qerr.Code(err) != qerr.CodePathOutsideRoot {
		t.Fatalf("Open = %v", err)
	}
}
