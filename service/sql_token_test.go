package service

import (
	"context"
	"testing"

	"github.com/quarrydb/quarry/internal/qerr"
)

// TestSQLFilterToken: a pattern_filter token in advanced_query keeps
// exactly the rows of the equivalent IN list, on the table reading a
// dataset it was confirmed for (named or found), joins included; misuse is
// refused with a code.
func TestSQLFilterToken(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "budget/2023/programs.csv", "program,amount,ministry\nScience grants,1,m1\nSchools,3,m2\nScience grants,2,m2\nScience fairs,5,m1\n")
	writeFile(t, root, "budget/ministries.csv", "ministry,name\nm1,Education\nm2,Science\n")
	s, alloc := newTestService(t, root, 0, nil)
	ctx := context.Background()
	pf, err := s.PatternFilter(ctx, PatternFilterRequest{Dataset: "budget/2023/programs", Field: "program", Patterns: []string{"science"},
		Confirmed: &PatternConfirmation{Include: []string{"Science grants"}}})
	if err != nil || pf.FilterToken == "" {
		t.Fatalf("pattern_filter: %+v %v", pf, err)
	}
	run := func(sql string, params ...any) (string, error) {
		res, err := s.SQL(ctx, SQLRequest{SQL: sql, Params: params})
		if err != nil {
			return "", err
		}
		return string(res.Result.Data), nil
	}
	for _, tc := range []struct{ sql, equiv string }{
		{`SELECT program, amount FROM programs WHERE filter_token($1) ORDER BY amount`,
			`SELECT program, amount FROM programs WHERE program IN ('Science grants') ORDER BY amount`},
		{`SELECT p.amount, m.name FROM programs p JOIN ministries m USING (ministry) WHERE filter_token(p.program, $1) AND amount > 1`,
			`SELECT p.amount, m.name FROM programs p JOIN ministries m USING (ministry) WHERE p.program IN ('Science grants') AND amount > 1`},
		{`SELECT count(*) FROM programs a JOIN programs b ON a.ministry = b.ministry WHERE filter_token(b.program, $1)`,
			`SELECT count(*) FROM programs a JOIN programs b ON a.ministry = b.ministry WHERE b.program IN ('Science grants')`},
	} {
		got, err := run(tc.sql, pf.FilterToken)
		if err != nil {
			t.Fatalf("%s: %v", tc.sql, err)
		}
		want, err := run(tc.equiv)
		if err != nil {
			t.Fatalf("%s: %v", tc.equiv, err)
		}
		if got != want || got == "[]" {
			t.Fatalf("%s:\n got %s\nwant %s", tc.sql, got, want)
		}
	}
	for _, tc := range []struct {
		sql    string
		params []any
		code   string
	}{
		{`SELECT * FROM ministries WHERE filter_token($1)`, []any{pf.FilterToken}, qerr.CodeInvalidFilterToken},
		{`SELECT * FROM programs WHERE filter_token($1)`, []any{pf.FilterToken + "x"}, qerr.CodeInvalidFilterToken},
		{`SELECT * FROM programs WHERE filter_token($1)`, []any{7}, qerr.CodeInvalidArgument},
		{`SELECT * FROM programs WHERE amount > 1 OR filter_token($1)`, []any{pf.FilterToken}, qerr.CodeUnsupportedSQL},
		{`SELECT * FROM programs a, programs b WHERE filter_token($1)`, []any{pf.FilterToken}, qerr.CodeInvalidArgument},
		{`SELECT * FROM programs WHERE filter_token(amount, $1)`, []any{pf.FilterToken}, qerr.CodeInvalidFilterToken},
	} {
		if _, err := run(tc.sql, tc.params...); qerr.Code(err) != tc.code {
			t.Fatalf("%s %v: got %v, want %s", tc.sql, tc.params, err, tc.code)
		}
	}
	waitFreed(t, alloc)
}
