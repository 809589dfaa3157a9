package catalog

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"fmt"
	"io"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// Compressed text files: a text format's file may carry one compression
// suffix, ".gz" (gzip), ".zst"/".zstd" (Zstandard) or ".bz2" (bzip2),
// decompressed as a stream while reading. All three are bounded the same
// way (Limits.MaxDecompressedBytes, Limits.MaxCompressionRatio through
// inflateLimiter); a Zstandard frame may ask for a window of at most
// zstdMaxWindow bytes.

// zstdMaxWindow bounds the memory a Zstandard frame may ask the decoder
// for (zstd --long=27 files still read; larger windows are refused).
const zstdMaxWindow = 128 << 20

// compressionSuffixes maps a compression suffix (lower case) to its codec name.
var compressionSuffixes = map[string]string{".gz": "gzip", ".zst": "zstd", ".zstd": "zstd", ".bz2": "bzip2"}

// TrimCompression splits a lower-cased file name into the name without a
// compression suffix and the codec name ("" when uncompressed).
func TrimCompression(lower string) (string, string) {
	for ext, codec := range compressionSuffixes {
		if strings.HasSuffix(lower, ext) {
			return strings.TrimSuffix(lower, ext), codec
		}
	}
	return lower, ""
}

// CodecOf is the codec of a file by its name (RelPath, else AbsPath);
// gzip when the name carries no known suffix (callers only ask for
// compressed files).
func CodecOf(file FileInfo) string {
	name := file.RelPath
	if name == "" {
		name = file.AbsPath
	}
	if _, codec := TrimCompression(strings.ToLower(name)); codec != "" {
		return codec
	}
	return "gzip"
}

// Decompressing returns the decompressed stream of in (the compressed
// bytes of file, codec by codecOf), failing with a resource_exhausted
// error past lim, and the closer of the decompressor (not of in).
func Decompressing(file FileInfo, in io.Reader, lim Limits) (io.Reader, io.Closer, error) {
	cin := &countingReader{r: in}
	switch codec := CodecOf(file); codec {
	case "zstd":
		zr, err := zstd.NewReader(cin, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(zstdMaxWindow),
			zstd.WithDecoderLowmem(true))
		if err != nil {
			return nil, nil, fmt.Errorf("not a valid zstd file: %w", err)
		}
		return newInflateLimiter(zr, cin, lim), closeFunc(func() error { zr.Close(); return nil }), nil
	case "bzip2":
		return newInflateLimiter(bzip2.NewReader(cin), cin, lim), closeFunc(func() error { return nil }), nil
	default:
		zr, err := gzip.NewReader(cin)
		if err != nil {
			return nil, nil, fmt.Errorf("not a valid gzip file: %w", err)
		}
		return newInflateLimiter(zr, cin, lim), zr, nil
	}
}

// closeFunc is an io.Closer calling itself.
type closeFunc func() error

func (f closeFunc) Close() error { return f() }

// OpenDecompressed opens file for reading (confined: FileInfo.Open) and
// returns its bytes, decompressed when gz (codec by codecOf). The closer
// closes everything.
func OpenDecompressed(file FileInfo, gz bool, lim Limits) (io.Reader, io.Closer, error) {
	f, err := file.Open()
	if err != nil {
		return nil, nil, err
	}
	if !gz {
		return f, f, nil
	}
	zr, zc, err := Decompressing(file, bufio.NewReader(f), lim)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return zr, MultiCloser{zc, f}, nil
}

// SkipBOM drops a UTF-8 byte order mark at the start of br.
func SkipBOM(br *bufio.Reader) {
	if bom, err := br.Peek(3); err == nil && bytes.Equal(bom, []byte{0xEF, 0xBB, 0xBF}) {
		_, _ = br.Discard(3)
	}
}
