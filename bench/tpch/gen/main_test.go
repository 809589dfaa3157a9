package main

import (
	"encoding/csv"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// readTable returns a generated table's rows (without the header).
func readTable(t *testing.T, dir, name string) [][]string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, name+".csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return rows[1:]
}

// TestKeysAndCardinalities generates scale factor 0.002 and checks the
// specification's cardinalities and key relationships: every foreign key
// resolves, order keys are the sparse 8-of-32 sequence, customers with a key
// divisible by 3 have no orders, a lineitem's supplier is one of its part's
// four partsupp suppliers, flags follow the dates, and o_totalprice is its
// lines' sum.
func TestKeysAndCardinalities(t *testing.T) {
	dir := t.TempDir()
	out, err := exec.Command("go", "run", ".", "-sf", "0.002", "-dir", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("gen: %v\n%s", err, out)
	}
	s := scaled(0.002)
	counts := map[string]int64{"region": 5, "nation": 25, "supplier": s.suppliers, "customer": s.customers,
		"part": s.parts, "partsupp": 4 * s.parts, "orders": s.orders}
	tables := map[string][][]string{}
	for name, want := range counts {
		tables[name] = readTable(t, dir, name)
		if got := int64(len(tables[name])); got != want {
			t.Errorf("%s: %d rows, want %d", name, got, want)
		}
	}
	lines := readTable(t, dir, "lineitem")
	if n := int64(len(lines)); n < 3*s.orders || n > 5*s.orders {
		t.Errorf("lineitem: %d rows for %d orders, want about 4 per order", n, s.orders)
	}
	partSupp := map[[2]string]bool{}
	for _, r := range tables["partsupp"] {
		partSupp[[2]string{r[0], r[1]}] = true
	}
	orderTotal := map[string]float64{}
	for i, r := range tables["orders"] {
		i := int64(i) + 1
		if want := strconv.FormatInt((i-1)/8*32+(i-1)%8+1, 10); r[0] != want {
			t.Fatalf("order %d: key %s, want %s", i, r[0], want)
		}
		cust, _ := strconv.ParseInt(r[1], 10, 64)
		if cust < 1 || cust > s.customers || cust%3 == 0 {
			t.Fatalf("order %s: customer %d", r[0], cust)
		}
		orderTotal[r[0]], _ = strconv.ParseFloat(r[3], 64)
	}
	sums := map[string]float64{}
	for _, r := range lines {
		if !partSupp[[2]string{r[1], r[2]}] {
			t.Fatalf("lineitem %s/%s: (part %s, supplier %s) not in partsupp", r[0], r[3], r[1], r[2])
		}
		if _, ok := orderTotal[r[0]]; !ok {
			t.Fatalf("lineitem: order %s does not exist", r[0])
		}
		ext, _ := strconv.ParseFloat(r[5], 64)
		disc, _ := strconv.ParseFloat(r[6], 64)
		tax, _ := strconv.ParseFloat(r[7], 64)
		sums[r[0]] += ext * (1 + tax) * (1 - disc)
		if (r[10] > "1995-06-17") != (r[9] == "O") {
			t.Fatalf("lineitem %s/%s: status %s for ship date %s", r[0], r[3], r[9], r[10])
		}
		if (r[12] > "1995-06-17") != (r[8] == "N") {
			t.Fatalf("lineitem %s/%s: flag %s for receipt date %s", r[0], r[3], r[8], r[12])
		}
	}
	for k, total := range orderTotal {
		if d := total - sums[k]; d > 0.01 || d < -0.01 {
			t.Fatalf("order %s: total %.2f, lines sum to %.2f", k, total, sums[k])
		}
	}
}
