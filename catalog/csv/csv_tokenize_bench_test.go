package csv

import (
	"os"
	"testing"
)

// tokBenchData is the start of QUARRY_BENCH_CSV, or a small synthetic file.
func tokBenchData(b *testing.B) []byte {
	b.Helper()
	if p := os.Getenv("QUARRY_BENCH_CSV"); p != "" {
		f, err := os.Open(p)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		buf := make([]byte, 32<<20)
		n, _ := f.Read(buf)
		buf = buf[:n]
		return buf[:lastBoundary(buf)]
	}
	var s []byte
	row := "3000000001,2023-10-14T20:41:12,east,Compact Kettle,home & kitchen,3,6.49,0.05,damaged shipping box good\n" +
		"3000000002,2024-08-19T09:34:04,south,Urban Drone,home & kitchen,2,6.39,0.24,\"leave, leave poor\"\n"
	for len(s) < 8<<20 {
		s = append(s, row...)
	}
	return s
}

func benchTokenize(b *testing.B, record []int) {
	data := tokBenchData(b)
	t := newTokenizer(',', 9, record)
	t.flushRows = flushRowsFor(len(record))
	t.flush = func(int) error { return nil } // as the scans use it: spans stay in cache
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if err := t.run(data, false); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTokenizeAll(b *testing.B)  { benchTokenize(b, []int{0, 1, 2, 3, 4, 5, 6, 7, 8}) }
func BenchmarkTokenizeOne(b *testing.B)  { benchTokenize(b, []int{2}) }
func BenchmarkTokenizeNone(b *testing.B) { benchTokenize(b, nil) }

func BenchmarkLastBoundary(b *testing.B) {
	data := tokBenchData(b)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		lastBoundary(data)
	}
}
