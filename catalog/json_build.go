package catalog

import (
	"fmt"
	"strconv"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog/infer"
)

// jsonKeys maps the flattened names of a file's records to column
// numbers. It remembers which column the field at each position of a
// record had last time, so records with the same keys in the same order
// (nearly every NDJSON file) find their columns by one comparison instead
// of hashing each name.
type jsonKeys struct {
	index map[string]int
	names []string // by column
	last  []int    // by field position: the column met there last
}

func newJSONKeys() *jsonKeys { return &jsonKeys{index: map[string]int{}} }

// lookup is the column of the field at position pos named name.
func (k *jsonKeys) lookup(pos int, name string) (int, bool) {
	if pos < 0 {
		j, ok := k.index[name]
		return j, ok
	}
	if pos < len(k.last) {
		if j := k.last[pos]; j >= 0 && k.names[j] == name {
			return j, true
		}
	}
	j, ok := k.index[name]
	if ok {
		k.remember(pos, j)
	}
	return j, ok
}

// add makes name (owned by the caller: not a view of a record) the next
// column, met at position pos (-1: none), and returns its number.
func (k *jsonKeys) add(pos int, name string) int {
	j := len(k.names)
	k.index[name] = j
	k.names = append(k.names, name)
	if pos >= 0 {
		k.remember(pos, j)
	}
	return j
}

func (k *jsonKeys) remember(pos, j int) {
	for len(k.last) <= pos {
		k.last = append(k.last, -1)
	}
	k.last[pos] = j
}

// jsonCells builds one batch of a projected column straight from the
// records' field texts: int64, float64, YYYY-MM-DD dates, ISO timestamps,
// booleans and text columns are parsed into their builders as the records
// are read (with the parsers convertText uses); the other kinds (other
// date and timestamp layouts) and columns with a type override are
// collected as text and converted per batch (convertText). A text that does not parse is kept as the
// column's error, reported where the text path reports it (when the
// batch's column is converted), with the same message.
type jsonCells struct {
	direct bool
	mode   infer.Kind // direct: KindString, KindInt, KindFloat, KindDate, KindTSNaive, KindTSZoned or KindBool
	what   string     // the type's phrase in the error
	b      array.Builder
	str    *array.StringBuilder
	i64    *array.Int64Builder
	f64    *array.Float64Builder
	d32    *array.Date32Builder
	ts     *array.TimestampBuilder
	bools  *array.BooleanBuilder
	err    error // the first text of the batch that did not parse
}

// newJSONCells is the builder of column j of kinds and types (nil: no
// overrides).
func newJSONCells(mem memory.Allocator, kinds []infer.Kind, types []*cardType, j int) *jsonCells {
	return jsonCellsOf(mem, kinds[j], types != nil && types[j] != nil)
}

// jsonCellsOf is the builder of a column of kind k, with a type override
// when override is true.
func jsonCellsOf(mem memory.Allocator, k infer.Kind, override bool) *jsonCells {
	c := &jsonCells{}
	switch {
	case override, k.Textual():
		c.direct = !override
		c.mode = infer.KindString
		c.str = array.NewStringBuilder(mem)
		c.b = c.str
	case k == infer.KindInt || k == infer.KindIntWide:
		c.direct, c.mode, c.what = true, infer.KindInt, "an int64"
		c.i64 = array.NewInt64Builder(mem)
		c.b = c.i64
	case k == infer.KindFloat:
		c.direct, c.mode, c.what = true, infer.KindFloat, "a float64"
		c.f64 = array.NewFloat64Builder(mem)
		c.b = c.f64
	case k == infer.KindDate:
		c.direct, c.mode, c.what = true, infer.KindDate, "a YYYY-MM-DD date"
		c.d32 = array.NewDate32Builder(mem)
		c.b = c.d32
	case k == infer.KindTSNaive || k == infer.KindTSZoned:
		dt := k.ArrowType().(*arrow.TimestampType)
		c.direct, c.mode, c.what = true, k, "a "+dt.String()+" timestamp"
		c.ts = array.NewTimestampBuilder(mem, dt)
		c.b = c.ts
	case k == infer.KindBool:
		c.direct, c.mode, c.what = true, k, "a bool"
		c.bools = array.NewBooleanBuilder(mem)
		c.b = c.bools
	default:
		c.mode = infer.KindString
		c.str = array.NewStringBuilder(mem)
		c.b = c.str
	}
	return c
}

// append adds one cell (nil or a JSON null: null).
func (c *jsonCells) append(f *jsonField) {
	if f == nil {
		c.b.AppendNull()
		return
	}
	c.appendValue(f.kind, f.text)
}

// appendValue adds the cell of JSON kind k and text s. The builders have
// room for the cell (Reserve: fill's, build's), and the common shapes of
// numbers and timestamps are parsed by infer's fast parsers, which give
// what strconv and ParseTimestamp give.
func (c *jsonCells) appendValue(k jsonKind, s string) {
	if k == jNull {
		c.b.AppendNull()
		return
	}
	ok := true
	b := unsafe.Slice(unsafe.StringData(s), len(s)) // only read
	switch c.mode {
	case infer.KindString:
		c.str.Append(s)
	case infer.KindInt:
		v, iok := infer.ParseInt64Bytes(b)
		c.i64.UnsafeAppend(v)
		ok = iok
	case infer.KindFloat:
		v, fok := infer.ParseDecimalFast(b)
		if !fok {
			var err error
			v, err = strconv.ParseFloat(s, 64)
			fok = err == nil
		}
		c.f64.UnsafeAppend(v)
		ok = fok
	case infer.KindDate:
		d, dok := infer.ParseDateBytes(b)
		c.d32.UnsafeAppend(arrow.Date32(d))
		ok = dok
	case infer.KindTSNaive, infer.KindTSZoned:
		var ms int64
		tok := false
		if c.mode == infer.KindTSNaive {
			ms, tok = infer.ParseNaiveTSFast(b)
		}
		if !tok {
			var zoned bool
			ms, zoned, tok = infer.ParseTimestamp(s)
			tok = tok && zoned == (c.mode == infer.KindTSZoned)
		}
		c.ts.UnsafeAppend(arrow.Timestamp(ms))
		ok = tok
	case infer.KindBool:
		v, bok := infer.ParseBool(s)
		c.bools.Append(v)
		ok = bok
	}
	if !ok && c.err == nil {
		c.err = fmt.Errorf("value %q is not %s", s, c.what)
	}
}

// finish is the batch's column and the error of its first unparsed text;
// the builder is reset for the next batch.
func (c *jsonCells) finish() (arrow.Array, error) {
	a, err := c.b.NewArray(), c.err
	c.err = nil
	return a, err
}

func (c *jsonCells) release() { c.b.Release() }
