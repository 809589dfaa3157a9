// Command joingen writes the tables of the H2O / DuckDB Labs db-benchmark
// join workload (J1_<N>) as CSV into a directory, in the shape of the
// benchmark's join-datagen.R (K = S = N/1e6 small keys, M = N/1e3 medium
// keys; no nulls):
//
//	x.csv      N rows: id1 1..1.1*S, id2 1..1.1*M, id3 1..1.1*N (uniform; about
//	           9 % of the keys have no match), id4..id6 "id"+id1..id3, v1 float
//	small.csv  S rows: id1 = 1..S, id4 = "id"+id1, v2 float
//	medium.csv M rows: id1 1..S, id2 = 1..M, id4, id5 = "id"+id1, "id"+id2, v2
//	big.csv    N rows: id1 1..S, id2 1..M, id3 = a permutation of 1..N,
//	           id4..id6 = "id"+id1..id3, v2 float
//
// Values come from an own splitmix64 stream (-seed): the shapes are the
// benchmark's, the values are not R's, so answers compare between the
// engines of one run.
//
//	joingen -n 10000000 -seed 42 -dir DIR
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/quarrydb/quarry/bench/splitmix"
)

func main() {
	n := flag.Int64("n", 10_000_000, "rows of x and big")
	seed := flag.Uint64("seed", 42, "random seed")
	dir := flag.String("dir", "", "output directory")
	flag.Parse()
	if *dir == "" || *n < 1 {
		fmt.Fprintln(os.Stderr, "usage: joingen -n N -seed S -dir DIR")
		os.Exit(2)
	}
	if err := run(*n, *seed, *dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(n int64, seed uint64, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	s, m := max(n/1_000_000, 1), max(n/1_000, 1)
	r := splitmix.New(seed)
	v := func(b []byte) []byte {
		return strconv.AppendFloat(b, math.Round(float64(r.Next()>>11)*(1.0/(1<<53))*100*1e6)/1e6, 'f', -1, 64)
	}
	more := func(k int64) int64 { return k + max(k/10, 1) } // about 9 % of x's keys unmatched
	tables := []struct {
		name, header string
		rows         int64
		row          func(b []byte, i int64) []byte
	}{
		{"small", "id1,id4,v2", s, func(b []byte, i int64) []byte {
			return v(ids(b, i+1))
		}},
		{"medium", "id1,id2,id4,id5,v2", m, func(b []byte, i int64) []byte {
			return v(ids(b, r.Upto(s), i+1))
		}},
		{"big", "id1,id2,id3,id4,id5,id6,v2", n, bigRows(r, n, s, m, v)},
		{"x", "id1,id2,id3,id4,id5,id6,v1", n, func(b []byte, _ int64) []byte {
			return v(ids(b, r.Upto(more(s)), r.Upto(more(m)), r.Upto(more(n))))
		}},
	}
	for _, t := range tables {
		if err := write(filepath.Join(dir, t.name+".csv"), t.header, t.rows, t.row); err != nil {
			return err
		}
	}
	return nil
}

// bigRows is big's row function: id3 walks a random permutation of 1..n.
func bigRows(r *splitmix.Rand, n, s, m int64, v func([]byte) []byte) func([]byte, int64) []byte {
	perm := make([]int32, n)
	for i := range perm {
		perm[i] = int32(i + 1)
	}
	for i := n - 1; i > 0; i-- {
		j := int64(r.Next() % uint64(i+1))
		perm[i], perm[j] = perm[j], perm[i]
	}
	return func(b []byte, i int64) []byte {
		return v(ids(b, r.Upto(s), r.Upto(m), int64(perm[i])))
	}
}

// ids appends the integer keys, then "id"+key for each, then a comma (the
// value column follows).
func ids(b []byte, keys ...int64) []byte {
	for _, k := range keys {
		b = strconv.AppendInt(b, k, 10)
		b = append(b, ',')
	}
	for _, k := range keys {
		b = append(b, "id"...)
		b = strconv.AppendInt(b, k, 10)
		b = append(b, ',')
	}
	return b
}

func write(path, header string, rows int64, row func([]byte, int64) []byte) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString(header + "\n")
	var b []byte
	for i := range rows {
		b = append(row(b[:0], i), '\n')
		if _, err := w.Write(b); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
