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
)

type rng struct{ s uint64 }

func (r *rng) next() uint64 {
	r.s += 0x9E3779B97F4A7C15
	z := r.s
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// upto returns 1..n.
func (r *rng) upto(n int64) int64 { return 1 + int64(r.next()%uint64(n)) }

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
	r := &rng{s: *seed}
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
		b = pad(b, r.upto(*k), 3)
		b = append(b, ',')
		b = pad(b, r.upto(*k), 3)
		b = append(b, ',')
		b = pad(b, r.upto(nk), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, r.upto(*k), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, r.upto(*k), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, r.upto(nk), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, r.upto(5), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, r.upto(15), 10)
		b = append(b, ',')
		v3 := math.Round(float64(r.next()>>11)*(1.0/(1<<53))*100*1e6) / 1e6
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
