package flightsql

import (
	"bytes"
	"testing"
)

// FuzzDecodeHandle: any bytes a client sends as a statement handle or
// ticket are either refused or decoded into a statement whose encoding
// decodes to the same statement again; nothing panics.
func FuzzDecodeHandle(f *testing.F) {
	for _, h := range []stmtHandle{
		{SQL: `SELECT 1`},
		{SQL: `SELECT * FROM "weather/stations" WHERE station_id = $1`, Params: []any{"AM01"}},
		{SQL: `SELECT $1, $2, $3`, Params: []any{int64(-7), 1.5, nil}},
	} {
		b, err := encodeHandle(h)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("quarry.sql.v1:"))
	f.Add([]byte("quarry.sql.v1:{\"sql\":1}"))
	f.Add([]byte("garbage"))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := decodeHandle(b)
		if err != nil {
			return
		}
		again, err := encodeHandle(h)
		if err != nil {
			return // e.g. a number json.Number cannot re-encode
		}
		h2, err := decodeHandle(again)
		if err != nil {
			t.Fatalf("re-encoded handle %q does not decode: %v", again, err)
		}
		again2, err := encodeHandle(h2)
		if err != nil || !bytes.Equal(again, again2) {
			t.Fatalf("encoding not stable: %q then %q (%v)", again, again2, err)
		}
	})
}
