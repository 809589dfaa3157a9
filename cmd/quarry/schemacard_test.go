package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quarrydb/quarry/catalog"
)

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestSchemaCardInitAndCheck(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "w.csv"), []byte("day,temp,city\n2024-01-01,1.5,Yerevan\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// To stdout.
	code, out, errs := runCLI(t, "schema-card", "init", "w", "--data", root)
	if code != 0 {
		t.Fatalf("init: %d %s", code, errs)
	}
	cf, err := catalog.ParseCardFile([]byte(out))
	if err != nil || len(cf.Columns) != 3 || cf.Columns[0].Type != "date" || cf.Columns[1].Name != "temp" {
		t.Fatalf("card: %v %s", err, out)
	}
	// Never into the data root: refused, printed instead, exit 1.
	inRoot := filepath.Join(root, "w.csv.schema.json")
	code, out, errs = runCLI(t, "schema-card", "init", "w", "--data", root, "--out", inRoot)
	if code != 1 || !strings.Contains(errs, "refusing") || !strings.Contains(out, `"name": "temp"`) {
		t.Fatalf("inside the root: %d %q %q", code, out, errs)
	}
	if _, err := os.Stat(inRoot); !os.IsNotExist(err) {
		t.Fatalf("wrote into the data root: %v", err)
	}
	// Elsewhere: written once, then only with --force.
	dst := filepath.Join(t.TempDir(), "card.json")
	if code, _, errs = runCLI(t, "schema-card", "init", "w", "--data", root, "--out", dst); code != 0 {
		t.Fatalf("out: %d %s", code, errs)
	}
	if code, _, errs = runCLI(t, "schema-card", "init", "w", "--data", root, "--out", dst); code != 1 || !strings.Contains(errs, "--force") {
		t.Fatalf("existing file: %d %s", code, errs)
	}
	if code, _, errs = runCLI(t, "schema-card", "init", "w", "--data", root, "--out", dst, "--force"); code != 0 {
		t.Fatalf("--force: %d %s", code, errs)
	}
	if code, _, _ = runCLI(t, "schema-card", "init", "nope", "--data", root); code != 1 {
		t.Fatalf("unknown dataset: %d", code)
	}
	if code, _, _ = runCLI(t, "schema-card", "frobnicate"); code != 2 {
		t.Fatalf("bad sub-verb: %d", code)
	}

	// check: fine without cards, then a bad card is reported.
	if code, out, _ = runCLI(t, "schema-card", "check", "--data", root); code != 0 || !strings.Contains(out, "OK") {
		t.Fatalf("check: %d %s", code, out)
	}
	var card map[string]any
	b, _ := os.ReadFile(dst)
	_ = json.Unmarshal(b, &card)
	card["columns"].([]any)[1].(map[string]any)["role"] = "Not OK"
	b, _ = json.Marshal(card)
	if err := os.WriteFile(inRoot, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, _ = runCLI(t, "schema-card", "check", "--data", root); code != 1 || !strings.Contains(out, "w.csv.schema.json") || !strings.Contains(out, "lower-case identifier") {
		t.Fatalf("check bad card: %d %s", code, out)
	}

	// A type override a value does not parse under is reported with the
	// row and the column.
	if err := os.WriteFile(filepath.Join(root, "p.csv"), []byte("id,amount\n1,10\n2,1.5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(inRoot, []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "p.csv.schema.json"), []byte(`{"columns": [{"name": "amount", "type": "int64"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, _ = runCLI(t, "schema-card", "check", "--data", root); code != 1 || !strings.Contains(out, `p.csv: error: does not read as its schema card says (p.csv.schema.json): row 2, column "amount": "1.5" does not parse as int64`) || strings.Contains(out, "matches no data file") {
		t.Fatalf("check override: %d %s", code, out)
	}
}
