package materialize
import ("github.com/apache/arrow-go/v18/arrow";"testing";"time";"context";"fmt")
func TestDbgJ1Cols(t *testing.T) {
	schema, batches := j1Batches(t, 2_000_000)
	defer releaseBatches(batches)
	for _, codec := range ParquetCodecs {
		c, _ := codec.codec()
		var buf discardCounter
		pw, _ := newParquetWriterPath(&buf, schema, c, false)
		f := pw.flat
		// one row group's worth of batches at a time
		per := make([]time.Duration, len(f.cols)); size := make([]int64, len(f.cols))
		for lo := 0; lo+2 <= len(batches); lo += 2 {
			for ci, col := range f.cols {
				arrs := []arrow.Array{batches[lo].Column(ci), batches[lo+1].Column(ci)}
				var cw chunkWriter; cw.codec = c; cw.reset(context.Background(), col.phys, f.paths[ci])
				t0 := time.Now()
				switch col.kind { case flatFixed: encodeFixedColumn(&cw, arrs); case flatBytes: encodeBytesColumn(&cw, arrs, col.utf8); case flatDict: encodeDictColumn(&cw, arrs, col.utf8) }
				ch := cw.finish(0)
				per[ci] += time.Since(t0); size[ci] += int64(len(ch.data))
			}
		}
		for ci := range f.cols { fmt.Printf("%s %s %v %.1fMB\n", codec, f.paths[ci][0], per[ci].Round(time.Millisecond), float64(size[ci])/1e6) }
	}
}
type discardCounter struct{}
func (discardCounter) Write(p []byte) (int, error) { return len(p), nil }
