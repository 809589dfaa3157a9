package materialize

import (
	"strings"

	"github.com/klauspost/compress/s2"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/compress/snappy"
	"github.com/parquet-go/parquet-go/compress/zstd"
	"github.com/parquet-go/parquet-go/format"

	"github.com/quarrydb/quarry/internal/qerr"
)

// ParquetCodec names the compression codec of a Parquet file's pages.
type ParquetCodec string

// The codecs WriteParquetWith supports.
const (
	// ParquetSnappy is snappy, the default (as DuckDB's and pyarrow's
	// writers): with the flat path's encodings (dictionaries, delta) a
	// 9M-row join result is 1.2× the zstd file for 37% less writer CPU
	// (BENCHMARKS.md, "Parquet artifacts of J1 results").
	ParquetSnappy ParquetCodec = "snappy"
	// ParquetZstd is zstd at its fastest level: smaller files, more CPU.
	ParquetZstd ParquetCodec = "zstd"
	// ParquetUncompressed stores the pages as they are.
	ParquetUncompressed ParquetCodec = "none"
)

// ParquetCodecs lists the supported codecs, the default first.
var ParquetCodecs = []ParquetCodec{ParquetSnappy, ParquetZstd, ParquetUncompressed}

// ParseParquetCodec returns the codec named s (case-insensitive; "" is the
// default, "uncompressed" an alias of "none"), or an invalid-argument error.
func ParseParquetCodec(s string) (ParquetCodec, error) {
	c := ParquetCodec(strings.ToLower(strings.TrimSpace(s)))
	switch c {
	case "":
		return ParquetSnappy, nil
	case "uncompressed":
		return ParquetUncompressed, nil
	}
	if _, err := c.codec(); err != nil {
		return "", err
	}
	return c, nil
}

// Shared codec instances: zstd pools its encoders, so files written one
// after the other reuse them.
var (
	zstdCodec   compress.Codec = &zstd.Codec{Level: zstd.SpeedFastest}
	snappyCodec compress.Codec = fastSnappy{}
)

// codec returns the parquet-go codec of c ("" is the default).
func (c ParquetCodec) codec() (compress.Codec, error) {
	switch c {
	case ParquetZstd:
		return zstdCodec, nil
	case ParquetSnappy, "":
		return snappyCodec, nil
	case ParquetUncompressed:
		return &parquet.Uncompressed, nil
	}
	return nil, qerr.Invalid(qerr.CodeInvalidArgument, "unknown Parquet codec %q (supported: snappy, zstd, none)", string(c))
}

// ParquetOptions are the settings of WriteParquetWith; the zero value is
// the default.
type ParquetOptions struct {
	// Codec compresses the pages ("" is ParquetSnappy).
	Codec ParquetCodec
}

// fastSnappy is the SNAPPY codec with the fast snappy-compatible block
// encoder of klauspost/compress (s2.EncodeSnappy). parquet-go's snappy
// codec uses the "better" encoder, which costs about as much CPU as zstd at
// its fastest level and so loses the point of choosing snappy. The blocks
// are plain snappy: every reader decodes them.
type fastSnappy struct{}

// String implements compress.Codec.
func (fastSnappy) String() string { return "SNAPPY" }

// CompressionCodec implements compress.Codec.
func (fastSnappy) CompressionCodec() format.CompressionCodec { return format.Snappy }

// Encode implements compress.Codec.
func (fastSnappy) Encode(dst, src []byte) ([]byte, error) {
	return s2.EncodeSnappy(dst, src), nil
}

// Decode implements compress.Codec.
func (fastSnappy) Decode(dst, src []byte) ([]byte, error) {
	return new(snappy.Codec).Decode(dst, src)
}
