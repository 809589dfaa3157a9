package service

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

func writeFile(t testing.TB, root, name, text string) {
	t.Helper()
	p := filepath.Join(root, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestPatternFilterTagAndToken: tag selects the datasets (by value and by
// key:value), a clear match is confirmed directly, the token resolves to
// the in filter on each tagged dataset and is refused on another, and no
// query memory is left behind.
func TestPatternFilterTagAndToken(t *testing.T) {
	root := t.TempDir()
	rows := "program,amount\nScience grants,1\nScience grants,2\nSchools,3\nRoads,4\nRoads,5\nHealth,6\n"
	writeFile(t, root, "budget/2023/programs.csv", rows)
	writeFile(t, root, "budget/2024/programs.csv", rows+"Science grants,7\n")
	writeFile(t, root, "other/programs.csv", rows)
	writeFile(t, root, "budget/_overall.json", `{"tags": {"domain": "budget"}}`)
	s, alloc := newTestService(t, root, 0, nil)
	ctx := context.Background()
	for _, tag := range []string{"budget", "domain:budget", "domain: Budget"} {
		out, err := s.PatternFilter(ctx, PatternFilterRequest{Field: "program", Patterns: []string{"science"}, Tag: tag})
		if err != nil {
			t.Fatalf("tag %q: %v", tag, err)
		}
		if out.Status != PatternConfirmed || !slices.Equal(out.Diagnostics.Datasets, []string{"budget/2023/programs", "budget/2024/programs"}) ||
			out.Diagnostics.Matched != 5 || out.Filter == nil || !slices.Equal(out.Filter.Value, []string{"Science grants"}) {
			t.Fatalf("tag %q: %+v", tag, out)
		}
		for _, ds := range out.Diagnostics.Datasets {
			spec, err := s.resolveFilterTokens(ds, planner.Spec{Filters: []planner.FilterSpec{{FilterToken: out.FilterToken}}})
			if err != nil || spec.Filters[0].Col != "program" || spec.Filters[0].Op != "in" || string(spec.Filters[0].Value) != `["Science grants"]` {
				t.Fatalf("%s: %+v %v", ds, spec, err)
			}
		}
		if _, err := s.resolveFilterTokens("other/programs", planner.Spec{Filters: []planner.FilterSpec{{FilterToken: out.FilterToken}}}); qerr.Code(err) != qerr.CodeInvalidFilterToken {
			t.Fatalf("foreign dataset: %v", err)
		}
	}
	out, err := s.PatternFilter(ctx, PatternFilterRequest{Field: "program", Patterns: []string{"science"}, Tag: "nope"})
	if qerr.Code(err) != qerr.CodeDatasetNotFound || out != nil {
		t.Fatalf("unknown tag: %+v %v", out, err)
	}
	waitFreed(t, alloc)
}

// TestFilterTokenRefusals: expired, tampered, mixed with col/op, or signed
// by another service.
func TestFilterTokenRefusals(t *testing.T) {
	k := newFilterKeys(nil)
	now := time.Now()
	tok, err := k.sign(filterClaims{Datasets: []string{"d"}, Col: "c", Op: "in", Values: []string{"x"}, Expires: now.Add(time.Minute).Unix()})
	if err != nil {
		t.Fatal(err)
	}
	if c, err := k.verify(tok, now); err != nil || c.Col != "c" {
		t.Fatalf("valid token: %+v %v", c, err)
	}
	for name, tc := range map[string]struct {
		keys  filterKeys
		token string
		at    time.Time
	}{
		"expired":      {k, tok, now.Add(2 * time.Minute)},
		"other key":    {newFilterKeys(nil), tok, now},
		"tampered":     {k, strings.Replace(tok, ".", ".A", 2), now},
		"no prefix":    {k, strings.TrimPrefix(tok, filterTokenPrefix), now},
		"empty":        {k, "", now},
		"invalid utf8": {k, "ft1.\xff.\xfe", now},
	} {
		if _, err := tc.keys.verify(tc.token, tc.at); qerr.Code(err) != qerr.CodeInvalidFilterToken {
			t.Errorf("%s: %v", name, err)
		}
	}
	s := &Service{filterKeys: k}
	_, err = s.resolveFilterTokens("d", planner.Spec{Filters: []planner.FilterSpec{{FilterToken: tok, Col: "c"}}})
	if qerr.Code(err) != qerr.CodeInvalidFilter {
		t.Errorf("token with col: %v", err)
	}
}

// BenchmarkPatternFilter measures pattern_filter over one field with 1M
// distinct values: "cold" includes the scan and the normalization, "warm"
// is a repeated call (cached normalized dictionary). Generating the file
// takes a few seconds.
func BenchmarkPatternFilter(b *testing.B) {
	root := b.TempDir()
	const n = 1_000_000
	var sb strings.Builder
	sb.WriteString("program,amount\n")
	words := []string{"Գիտություն", "Մասնագիտական կրթություն", "Առողջապահություն", "Ճանապարհներ", "Երևանի ծրագիր", "science grants"}
	for i := 0; i < n; i++ {
		fmt.Fprintf(&sb, "%s %d,%d\n", words[i%len(words)], i, i%100)
	}
	writeFile(b, root, "big.csv", sb.String())
	s, _ := newTestService(b, root, 0, nil)
	ctx := context.Background()
	req := PatternFilterRequest{Dataset: "big", Field: "program", Patterns: []string{"գիտություն"}}
	b.Run("cold", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			s.patterns.Purge()
			if _, err := s.PatternFilter(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("warm", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			out, err := s.PatternFilter(ctx, req)
			if err != nil {
				b.Fatal(err)
			}
			if out.Diagnostics.DistinctScanned != n {
				b.Fatalf("distinct %d", out.Diagnostics.DistinctScanned)
			}
		}
	})
}

// TestDistinctValuesTokenNotCached: a cached distinct_values answer over a
// token is not served once the token is refused (here: signed by another
// key, as after a restart).
func TestDistinctValuesTokenNotCached(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "p.csv", "program,amount\nScience grants,1\nRoads,2\n")
	s, _ := newTestService(t, root, 0, nil)
	ctx := context.Background()
	out, err := s.PatternFilter(ctx, PatternFilterRequest{Dataset: "p", Field: "program", Patterns: []string{"science"}, ConfirmThreshold: new(1.0)})
	if err != nil || out.Status != PatternConfirmed {
		t.Fatalf("%+v %v", out, err)
	}
	req := DistinctRequest{Dataset: "p", Column: "program", Filters: []planner.FilterSpec{{FilterToken: out.FilterToken}}}
	if d, err := s.DistinctValues(ctx, req); err != nil || d.TotalDistinct != 1 {
		t.Fatalf("%+v %v", d, err)
	}
	s.filterKeys = newFilterKeys(nil)
	if _, err := s.DistinctValues(ctx, req); qerr.Code(err) != qerr.CodeInvalidFilterToken {
		t.Fatalf("cached answer served for a refused token: %v", err)
	}
}
