package sqlfront

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/internal/testutil/golden"
	"github.com/quarrydb/quarry/planner"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// tpchTable is one table of tpchCatalog: its columns (name:type, type one
// of i int64, f float64, d date32, s string) and its rows at scale factor 1.
type tpchTable struct {
	cols string
	rows int64
}

// tpchCatalog is the TPC-H schema of bench/tpch (the generator's CSV
// columns with the types the catalog infers for them) with SF 1 row
// counts, which the optimizer's estimates read.
var tpchCatalog = map[string]tpchTable{
	"region":   {"r_regionkey:i r_name:s r_comment:s", 5},
	"nation":   {"n_nationkey:i n_name:s n_regionkey:i n_comment:s", 25},
	"supplier": {"s_suppkey:i s_name:s s_address:s s_nationkey:i s_phone:s s_acctbal:f s_comment:s", 10_000},
	"customer": {"c_custkey:i c_name:s c_address:s c_nationkey:i c_phone:s c_acctbal:f c_mktsegment:s c_comment:s", 150_000},
	"part":     {"p_partkey:i p_name:s p_mfgr:s p_brand:s p_type:s p_size:i p_container:s p_retailprice:f p_comment:s", 200_000},
	"partsupp": {"ps_partkey:i ps_suppkey:i ps_availqty:i ps_supplycost:f ps_comment:s", 800_000},
	"orders":   {"o_orderkey:i o_custkey:i o_orderstatus:s o_totalprice:f o_orderdate:d o_orderpriority:s o_clerk:s o_shippriority:i o_comment:s", 1_500_000},
	"lineitem": {"l_orderkey:i l_partkey:i l_suppkey:i l_linenumber:i l_quantity:i l_extendedprice:f l_discount:f l_tax:f l_returnflag:s l_linestatus:s l_shipdate:d l_commitdate:d l_receiptdate:d l_shipinstruct:s l_shipmode:s l_comment:s", 6_001_215},
}

type tpchSchemas struct{}

func (tpchSchemas) Input(_ context.Context, name string) (planner.Input, error) {
	t, ok := tpchCatalog[strings.TrimPrefix(name, "tpch/")]
	if !ok {
		return planner.Input{}, qerr.NotFound(qerr.CodeDatasetNotFound, "dataset %q not found", name)
	}
	types := map[string]arrow.DataType{"i": arrow.PrimitiveTypes.Int64, "f": arrow.PrimitiveTypes.Float64,
		"d": arrow.FixedWidthTypes.Date32, "s": arrow.BinaryTypes.String}
	var fields []arrow.Field
	for _, c := range strings.Fields(t.cols) {
		n, typ, _ := strings.Cut(c, ":")
		fields = append(fields, field(n, types[typ]))
	}
	return planner.Input{Dataset: "tpch/" + strings.TrimPrefix(name, "tpch/"), Schema: arrow.NewSchema(fields, nil), RowCount: t.rows, RowCountExact: true}, nil
}

// TestTPCHPlans: the optimized plan of each TPC-H query of bench/tpch over
// the SF 1 schema, against testdata/tpch_plans/qNN.golden (regenerate with
// go test ./sqlfront -run TestTPCHPlans -update). The goldens show what
// the optimizer's rules make of real queries: where filters land, the
// join order, the semi joins of semi_join_reduce. Answers are checked
// against DuckDB in e2e TestTPCHAgainstDuckDB.
// tpchPlan is the optimized plan of the TPC-H query in file f over the SF 1 schema.
func tpchPlan(t *testing.T, f string) planner.Node {
	t.Helper()
	text, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	st, err := Parse(strings.TrimSuffix(strings.TrimSpace(string(text)), ";"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.Compile(context.Background(), tpchSchemas{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := planner.Optimize(c.Plan, planner.OptimizeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTPCHPlans(t *testing.T) {
	files, _ := filepath.Glob("../bench/tpch/queries/q*.sql")
	if len(files) != 22 {
		t.Fatalf("found %d TPC-H queries, want 22", len(files))
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".sql")
		t.Run(name, func(t *testing.T) {
			p := tpchPlan(t, f)
			golden.Check(t, filepath.Join("testdata", "tpch_plans", name+".golden"), planner.String(p), *update)
		})
	}
}
