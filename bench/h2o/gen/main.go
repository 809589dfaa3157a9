// Command gen writes the H2O / DuckDB Labs db-benchmark groupby table
// G1_<N>_<K>_0_0 (no nulls, unsorted) as CSV, in the shape of the
// benchmark's groupby-datagen.R:
//
//	id1, id2  strings "id001".."id<K>"            (K distinct)
//	id3       strings "id0000000001".. (10 digits) (N/K distinct)
//	id4, id5  integers 1..K
//	id6       integers 1..N/K
//	v1, v2    integers 1..5, 1..15
//	v3        float 0..100 rounded to 6 decimals
//
// Values are drawn uniformly with an own splitmix64 stream from -seed, so the
// bytes never depend on the Go version; the R generator's exact values are
// not reproduced (only its distributions), so answers compare between the
// engines of one run, not with published results.
//
//	gen -n 10000000 -k 100 -seed 42 -csv G1.csv
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math"
	"os"
	"strconv"

	"github.com/quarrydb/quarry/bench/splitmix"
)

func main() {
	n := flag.Int64("n", 10_000_000, "rows")
	k := flag.Int64("k", 100, "K: distinct values of id1, id2, id4, id5 (id3, id6: N/K)")
	seed := flag.Uint64("seed", 42, "random seed")
	out := flag.String("csv", "", "output CSV path")
	flag.Parse()
	if *out == "" || *n < 1 || *k < 1 {
		fmt.Fprintln(os.Stderr, "usage: gen -n N -k K -seed S -csv PATH")
		os.Exit(2)
	}
	nk := max(*n / *k, 1)
	f, err := os.Create(*out)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString("id1,id2,id3,id4,id5,id6,v1,v2,v3\n")
	r := splitmix.New(*seed)
	var b []byte
	pad := func(b []byte, v int64, width int) []byte {
		s := strconv.AppendInt(nil, v, 10)
		b = append(b, "id"...)
		for range width - len(s) {
			b = append(b, '0')
		}
		return append(b, s...)
	}
	for range *n {
		b = b[:0]
		b = pad(b, r.Upto(*k), 3)
		b = append(b, ',')
		b = pad(b, r.Upto(*k), 3)
		b = append(b, ',')
		b = pad(b, r.Upto(nk), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, r.Upto(*k), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, r.Upto(*k), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, r.Upto(nk), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, r.Upto(5), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, r.Upto(15), 10)
		b = append(b, ',')
		v3 := math.Round(float64(r.Next()>>11)*(1.0/(1<<53))*100*1e6) / 1e6
		b = strconv.AppendFloat(b, v3, 'f', -1, 64)
		b = append(b, '\n')
		if _, err := w.Write(b); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := f.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
