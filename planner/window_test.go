package planner_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

func TestWindowBuildErrors(t *testing.T) {
	cases := []struct {
		name, spec, code, field string
	}{
		{"unknown fn", `{"windows":[{"fn":"rnak","order_by":[{"col":"qty"}]}]}`, qerr.CodeInvalidArgument, "windows[0].fn"},
		{"aggregate not a window function", `{"windows":[{"fn":"list","col":"qty"}]}`, qerr.CodeInvalidArgument, "windows[0].fn"},
		{"corr without arg", `{"windows":[{"fn":"corr","col":"qty"}]}`, qerr.CodeInvalidArgument, "windows[0].arg"},
		{"corr of a string arg", `{"windows":[{"fn":"corr","col":"qty","arg":"region"}]}`, qerr.CodeInvalidArgument, "windows[0].arg"},
		{"corr of an unknown arg", `{"windows":[{"fn":"corr","col":"qty","arg":"prise"}]}`, qerr.CodeInvalidColumn, "windows[0].arg"},
		{"arg on sum", `{"windows":[{"fn":"sum","col":"qty","arg":"price"}]}`, qerr.CodeInvalidArgument, "windows[0].arg"},
		{"rank without order", `{"windows":[{"fn":"rank"}]}`, qerr.CodeInvalidArgument, "windows[0].order_by"},
		{"rank with col", `{"windows":[{"fn":"rank","col":"qty","order_by":[{"col":"qty"}]}]}`, qerr.CodeInvalidArgument, "windows[0].col"},
		{"lag without col", `{"windows":[{"fn":"lag","order_by":[{"col":"day"}]}]}`, qerr.CodeInvalidArgument, "windows[0].col"},
		{"sum of star", `{"windows":[{"fn":"sum","col":"*"}]}`, qerr.CodeInvalidArgument, "windows[0].col"},
		{"sum of string", `{"windows":[{"fn":"sum","col":"region"}]}`, qerr.CodeInvalidArgument, "windows[0]"},
		{"unknown col", `{"windows":[{"fn":"sum","col":"qtty"}]}`, qerr.CodeInvalidColumn, "windows[0].col"},
		{"unknown partition", `{"windows":[{"fn":"row_number","partition_by":["regoin"]}]}`, qerr.CodeInvalidColumn, "windows[0].partition_by[0]"},
		{"ntile without n", `{"windows":[{"fn":"ntile","order_by":[{"col":"qty"}]}]}`, qerr.CodeInvalidArgument, "windows[0].args"},
		{"ntile zero", `{"windows":[{"fn":"ntile","args":[0]}]}`, qerr.CodeInvalidArgument, "windows[0].args"},
		{"negative lag", `{"windows":[{"fn":"lag","col":"qty","args":[-1],"order_by":[{"col":"day"}]}]}`, qerr.CodeInvalidArgument, "windows[0].args"},
		{"default on sum", `{"windows":[{"fn":"sum","col":"qty","default":0}]}`, qerr.CodeInvalidArgument, "windows[0].default"},
		{"lag default of another type", `{"windows":[{"fn":"lag","col":"qty","default":"abc","order_by":[{"col":"day"}]}]}`, qerr.CodeInvalidArgument, "windows[0].default"},
		{"lag default beyond int64", `{"windows":[{"fn":"lead","col":"qty","default":1e30,"order_by":[{"col":"day"}]}]}`, qerr.CodeInvalidArgument, "windows[0].default"},
		{"args on sum", `{"windows":[{"fn":"sum","col":"qty","args":[2]}]}`, qerr.CodeInvalidArgument, "windows[0].args"},
		{"quantile without q", `{"windows":[{"fn":"quantile","col":"qty"}]}`, qerr.CodeInvalidArgument, "windows[0].q"},
		{"frame on rank", `{"windows":[{"fn":"rank","order_by":[{"col":"qty"}],"frame":{"start":"current row"}}]}`, qerr.CodeInvalidArgument, "windows[0].frame"},
		{"bad bound", `{"windows":[{"fn":"sum","col":"qty","frame":{"start":"two preceding"}}]}`, qerr.CodeInvalidArgument, "windows[0].frame.start"},
		{"bad frame type", `{"windows":[{"fn":"sum","col":"qty","frame":{"type":"groups","start":"current row"}}]}`, qerr.CodeInvalidArgument, "windows[0].frame.type"},
		{"backwards frame", `{"windows":[{"fn":"sum","col":"qty","frame":{"start":"unbounded following"}}]}`, qerr.CodeInvalidArgument, "windows[0].frame"},
		{"range offset, two keys", `{"windows":[{"fn":"sum","col":"qty","order_by":[{"col":"day"},{"col":"qty"}],"frame":{"type":"range","start":"3 preceding"}}]}`, qerr.CodeInvalidArgument, "windows[0].frame"},
		{"range offset, string key", `{"windows":[{"fn":"sum","col":"qty","order_by":[{"col":"region"}],"frame":{"type":"range","start":"3 preceding"}}]}`, qerr.CodeInvalidArgument, "windows[0].frame"},
		{"name clash", `{"windows":[{"fn":"sum","col":"qty","as":"price"}]}`, qerr.CodeInvalidArgument, "windows[0].as"},
		{"name twice", `{"windows":[{"fn":"sum","col":"qty"},{"fn":"sum","col":"qty"}]}`, qerr.CodeInvalidArgument, "windows[1].as"},
		{"order by blob", `{"windows":[{"fn":"row_number","order_by":[{"col":"blob"}]}]}`, qerr.CodeUnsupportedType, "windows[0].order_by[0].col"},
		{"top n no groups", `{"top_n_per_group":{"n":2,"by":[{"col":"qty"}]}}`, qerr.CodeInvalidArgument, "top_n_per_group"},
		{"top n no by", `{"group_by":["region"],"top_n_per_group":{"n":2}}`, qerr.CodeInvalidArgument, "top_n_per_group.by"},
		{"top n negative", `{"group_by":["region"],"top_n_per_group":{"n":-1,"by":[{"col":"qty"}]}}`, qerr.CodeInvalidArgument, "top_n_per_group.n"},
		{"top n with aggs", `{"group_by":["region"],"aggs":[{"col":"*","fn":"count"}],"top_n_per_group":{"n":2,"by":[{"col":"qty"}]}}`, qerr.CodeInvalidArgument, "top_n_per_group"},
		{"top n groups differ", `{"group_by":["region"],"top_n_per_group":{"n":2,"by":[{"col":"qty"}],"partition_by":["day"]}}`, qerr.CodeInvalidArgument, "top_n_per_group.partition_by"},
		{"top n unknown key", `{"top_n_per_group":{"n":2,"by":[{"col":"qtty"}],"partition_by":["day"]}}`, qerr.CodeInvalidColumn, "top_n_per_group.by[0].col"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := planner.Build(spec(t, c.spec), testInput())
			if err == nil {
				t.Fatal("expected an error")
			}
			if got := qerr.Code(err); got != c.code {
				t.Errorf("code: got %q, want %q (%v)", got, c.code, err)
			}
			e := qerr.As(err)
			if e.Hint == "" {
				t.Errorf("no hint in %v", err)
			}
			if f, _ := e.Diagnostics["field"].(string); f != c.field {
				t.Errorf("field: got %q, want %q (%v)", f, c.field, err)
			}
			if qerr.Code(err) == qerr.CodeInternal || errors.Is(err, qerr.ErrInternal) {
				t.Errorf("internal error: %v", err)
			}
		})
	}
}

// Window outputs are columns: usable in columns, expressions and order_by;
// projection pushdown keeps every column a window or top_n_per_group reads.
func TestWindowColumns(t *testing.T) {
	n, err := planner.Build(spec(t, `{"columns":["region","cum"],"windows":[{"fn":"sum","col":"qty","partition_by":["paid"],"order_by":[{"col":"day","desc":true}],"as":"cum"}],"order_by":[{"col":"cum"}]}`), testInput())
	if err != nil {
		t.Fatal(err)
	}
	o, err := planner.Optimize(n, planner.OptimizeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	scan := planner.ScanOf(o)
	for _, c := range []string{"region", "qty", "paid", "day"} {
		if !slices.Contains(scan.Columns, c) {
			t.Errorf("scan reads %v, missing %q", scan.Columns, c)
		}
	}
	if len(scan.Columns) != 4 {
		t.Errorf("scan reads %v, want 4 columns", scan.Columns)
	}
	n, err = planner.Build(spec(t, `{"columns":["day"],"top_n_per_group":{"n":1,"by":[{"col":"price"}],"partition_by":["region","paid"]}}`), testInput())
	if err != nil {
		t.Fatal(err)
	}
	if o, err = planner.Optimize(n, planner.OptimizeOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := planner.ScanOf(o).Columns; len(got) != 4 {
		t.Errorf("top_n_per_group scan reads %v, want day, region, price, paid", got)
	}
	// Clone and WithChildren copy the expressions' slices.
	c := planner.Clone(o)
	if planner.String(c) != planner.String(o) {
		t.Errorf("clone differs:\n%s\n%s", planner.String(c), planner.String(o))
	}
}

func TestParseFrameBound(t *testing.T) {
	cases := []struct {
		in   string
		want planner.FrameBound
		ok   bool
	}{
		{"unbounded preceding", planner.FrameBound{Kind: planner.UnboundedPreceding}, true},
		{"UNBOUNDED_FOLLOWING", planner.FrameBound{Kind: planner.UnboundedFollowing}, true},
		{" current  row ", planner.FrameBound{Kind: planner.CurrentRow}, true},
		{"3 preceding", planner.FrameBound{Kind: planner.Preceding, N: 3}, true},
		{"0 following", planner.FrameBound{Kind: planner.Following}, true},
		{"-1 preceding", planner.FrameBound{}, false},
		{"1.5 following", planner.FrameBound{}, false},
		{"current", planner.FrameBound{}, false},
		{"", planner.FrameBound{}, false},
		{"99999999999999999999 preceding", planner.FrameBound{}, false},
	}
	for _, c := range cases {
		got, err := planner.ParseFrameBound(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseFrameBound(%q) = %v, %v; want %v, ok %v", c.in, got, err, c.want, c.ok)
		}
	}
}

func FuzzParseFrameBound(f *testing.F) {
	for _, s := range []string{"unbounded preceding", "3 following", "current_row", "x preceding"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := planner.ParseFrameBound(s)
		if err != nil {
			return
		}
		if b.N < 0 {
			t.Fatalf("negative offset from %q", s)
		}
		again, err := planner.ParseFrameBound(b.String())
		if err != nil || again != b {
			t.Fatalf("%q -> %v does not round-trip: %v, %v", s, b, again, err)
		}
	})
}
