package csv

import (
	"github.com/quarrydb/quarry/internal/testutil/cpuclock"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog/infer"
	"github.com/quarrydb/quarry/catalog/internal/chunk"
)

// The cost of type inference against the rest of a cold read, on the
// same bytes (tokBenchData: QUARRY_BENCH_CSV's first 32 MiB, or a
// synthetic sales file): the cold read of a chunk (keepChunkSlow:
// tokenize, classify every cell, build the Arrow columns) against
// classifying alone (classifyFrom over every column of the tokenized
// chunk: the whole of inference, the round-trip rules included) and
// tokenizing alone. Run together so the load of the machine affects all
// three alike; the cpu-ms/op metric is the process's CPU time:
//
//	go test ./catalog/csv -run '^$' -bench 'InferShare' -benchtime 20x -count 3

func benchInferChunk(b *testing.B) (*csvTokenizer, *chunk.Chunk) {
	data := tokBenchData(b)
	all := []int{0, 1, 2, 3, 4, 5, 6, 7, 8}
	return newTokenizer(',', 9, all), &chunk.Chunk{Data: data}
}

func withProcCPU(b *testing.B, run func()) {
	t0 := cpuclock.Process()
	run()
	b.ReportMetric(float64(cpuclock.Process()-t0)/float64(b.N)/1e6, "cpu-ms/op")
}

// BenchmarkInferShareColdRead is the cold read of the chunk.
func BenchmarkInferShareColdRead(b *testing.B) {
	t, ch := benchInferChunk(b)
	b.SetBytes(int64(len(ch.Data)))
	withProcCPU(b, func() {
		for b.Loop() {
			var scratch []byte
			noDict := make([]atomic.Bool, 9)
			dicts := make([]workerDict, 9)
			out, err := keepChunkSlow(memory.DefaultAllocator, t, ch, &scratch, noDict, dicts)
			if err != nil {
				b.Fatal(err)
			}
			out.release()
		}
	})
}

// BenchmarkInferShareClassify is inference alone over the tokenized chunk.
func BenchmarkInferShareClassify(b *testing.B) {
	t, ch := benchInferChunk(b)
	if err := t.run(ch.Data, false); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(ch.Data)))
	var scratch []byte
	withProcCPU(b, func() {
		for b.Loop() {
			for c := range 9 {
				var tr infer.Trace
				if _, err := classifyFrom(infer.KindNull, t.spansOf(ch.Data, c), &scratch, &tr, 0); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// BenchmarkInferShareTokenize is tokenizing the chunk alone.
func BenchmarkInferShareTokenize(b *testing.B) {
	t, ch := benchInferChunk(b)
	b.SetBytes(int64(len(ch.Data)))
	withProcCPU(b, func() {
		for b.Loop() {
			if err := t.run(ch.Data, false); err != nil {
				b.Fatal(err)
			}
		}
	})
}
