package textmatch

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestLookalikeDoc checks that docs/PATTERNS.md lists exactly the
// look-alike table.
func TestLookalikeDoc(t *testing.T) {
	b, err := os.ReadFile("../../docs/PATTERNS.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "<!-- lookalikes:")
	if !ok {
		t.Fatal("docs/PATTERNS.md has no lookalikes table marker")
	}
	rows := map[string]bool{}
	for _, line := range strings.Split(table, "\n")[3:] {
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(line, "|")
		rows[strings.TrimSpace(cells[2])+">"+strings.TrimSpace(cells[4])] = true
	}
	for from, to := range lookalikes {
		key := fmt.Sprintf("U+%04X>U+%04X", from, to)
		if !rows[key] {
			t.Errorf("docs/PATTERNS.md lacks the row %s", key)
		}
		delete(rows, key)
	}
	for k := range rows {
		t.Errorf("docs/PATTERNS.md lists %s, which the table does not have", k)
	}
}
