package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/parquet-go/parquet-go"
)

// describeParquet reads back a written file (outside the timing): its row
// count, and on the first rep its columns, kinds and first rows.
func describeParquet(path string, rec map[string]any, first bool) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		return 0, err
	}
	if !first {
		return pf.NumRows(), nil
	}
	fields := pf.Schema().Fields()
	cols := make([]string, len(fields))
	kinds := make([]string, len(fields))
	for i, fd := range fields {
		cols[i] = fd.Name()
		switch fd.Type().Kind() {
		case parquet.Int32, parquet.Int64:
			kinds[i] = "i"
			if lt := fd.Type().LogicalType(); lt != nil && (strings.HasPrefix(lt.String(), "TIMESTAMP") || lt.String() == "DATE") {
				kinds[i] = "t"
			}
		case parquet.Float, parquet.Double:
			kinds[i] = "f"
		case parquet.Boolean:
			kinds[i] = "b"
		default:
			kinds[i] = "s"
		}
	}
	r := parquet.NewReader(f, pf.Schema())
	defer r.Close()
	rows := make([]parquet.Row, firstRows)
	n, err := r.ReadRows(rows)
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, err
	}
	out := make([][]any, 0, n)
	for _, row := range rows[:n] {
		cells := make([]any, len(fields))
		for _, v := range row {
			c := v.Column()
			if c < 0 || c >= len(cells) || v.IsNull() {
				continue
			}
			switch kinds[c] {
			case "i":
				if v.Kind() == parquet.Int32 {
					cells[c] = fmt.Sprint(v.Int32())
				} else {
					cells[c] = fmt.Sprint(v.Int64())
				}
			case "f":
				if v.Kind() == parquet.Float {
					cells[c] = jsonFloat(float64(v.Float()))
				} else {
					cells[c] = jsonFloat(v.Double())
				}
			case "b":
				cells[c] = v.Boolean()
			default:
				cells[c] = string(v.ByteArray())
			}
		}
		out = append(out, cells)
	}
	rec["cols"], rec["kinds"], rec["first_rows"] = cols, kinds, out
	return pf.NumRows(), nil
}
