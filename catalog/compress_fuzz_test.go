package catalog

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/quarrydb/quarry/internal/qerr"
)

// FuzzDecompress feeds arbitrary bytes to the gzip, zstd and bzip2 decoders
// behind the inflate limiter: they must never panic, never deliver more than
// MaxDecompressedBytes, and a limit hit must be resource_exhausted.
func FuzzDecompress(f *testing.F) {
	csv := []byte("a,b\n1,2\n3,4\n")
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(bytes.Repeat(csv, 1000))
	_ = zw.Close()
	enc, _ := zstd.NewWriter(nil)
	zs := enc.EncodeAll(bytes.Repeat(csv, 1000), nil)
	_ = enc.Close()
	bz, err := os.ReadFile(filepath.Join("testdata", "compressed", "plain.csv.bz2"))
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range [][]byte{gz.Bytes(), zs, bz, gz.Bytes()[:len(gz.Bytes())/2], zs[:len(zs)/2], bz[:10], nil, []byte("BZh9"), []byte{0x1f, 0x8b}} {
		for codec := range uint8(3) {
			f.Add(codec, s)
		}
	}
	names := []string{"x.csv.gz", "x.csv.zst", "x.csv.bz2"}
	const limit = 64 << 10
	f.Fuzz(func(t *testing.T, codec uint8, data []byte) {
		lim := Limits{MaxDecompressedBytes: limit}.WithDefaults()
		r, c, err := Decompressing(FileInfo{RelPath: names[int(codec)%len(names)]}, bytes.NewReader(data), lim)
		if err != nil {
			return
		}
		defer c.Close()
		n, err := io.Copy(io.Discard, io.LimitReader(r, 4*limit))
		if n > limit {
			t.Fatalf("delivered %d bytes past the %d-byte limit", n, limit)
		}
		if err != nil && errors.Is(err, qerr.ErrLimitExceeded) && qerr.Code(err) != qerr.CodeResourceExhausted {
			t.Fatalf("limit error with code %q: %v", qerr.Code(err), err)
		}
	})
}
