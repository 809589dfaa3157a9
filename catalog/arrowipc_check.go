package catalog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// The validating pre-pass of Arrow IPC files. arrow-go's ipc reader trusts
// the flatbuffers of a file: a vector length read from the file becomes a
// make() (a few hostile bytes claim four billion fields), an offset
// becomes a slice index, a compressed buffer's claimed size becomes an
// allocation. checkArrowFile reads the footer and the metadata of every
// message (never a body, except the 8-byte size prefix of compressed
// buffers), checks every flatbuffer offset and vector length it or
// arrow-go will follow against the bytes that hold it, and every block,
// buffer and claimed size against the file size and the Limits, before
// arrow-go allocates anything. What it passes is then read with a capped
// allocator (arrowipc.go), and the loaded arrays are checked against their
// buffers (checkIPCData) before anything reads their values.

// arrowMagic opens and closes an Arrow IPC file; a stream has none.
var arrowMagic = []byte("ARROW1")

// feather1Magic opens a Feather v1 file (a different format).
var feather1Magic = []byte("FEA1")

// ipcMaxDepth bounds the nesting of fields (arrow-go's limit too).
const ipcMaxDepth = 64

// ipcNullRowsFloor: a record batch may claim at most 8 rows per body byte
// plus this many (every column type but null takes at least a bit a row),
// so a tiny file cannot claim billions of rows of null columns.
const ipcNullRowsFloor = 1 << 16

// ipcLayout is what the pre-pass learned of a file.
type ipcLayout struct {
	rows    int64 // the sum of the record batches' lengths
	batches []int64
	// inflated is the most the compressed buffers claim to inflate to
	// (0 when nothing is compressed); bodies is the sum of the message
	// bodies; metadata the sum of the messages' metadata for a stream
	// (whose reader allocates it; 0 for a file). Reading the whole file
	// allocates at most their sum.
	inflated, bodies, metadata int64
	stream                     bool  // the stream format (arrowipc_stream.go)
	compressed                 bool  // some batch has compressed bodies
	size                       int64 // the file size validated (set by openArrow)
}

// errIPC marks a file the pre-pass refuses.
var errIPC = errors.New("not a valid Arrow IPC file")

func ipcErrorf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errIPC}, args...)...)
}

// checkArrowFile validates the Arrow IPC file (random-access format) of
// size bytes read through r.
func checkArrowFile(r io.ReaderAt, size int64, lim Limits) (ipcLayout, error) {
	var lay ipcLayout
	var head [8]byte
	if size < int64(len(head)) {
		return lay, ipcErrorf("the file is too short")
	}
	if _, err := r.ReadAt(head[:], 0); err != nil {
		return lay, fmt.Errorf("cannot read the file: %w", err)
	}
	if bytes.HasPrefix(head[:], feather1Magic) {
		return lay, ipcErrorf("Feather v1 files are not supported; re-save it as Feather v2 (Arrow IPC)")
	}
	if !bytes.HasPrefix(head[:], arrowMagic) {
		return lay, ipcErrorf("the magic bytes ARROW1 are missing at the start")
	}
	const tailLen = 10 // int32 footer length + magic
	if size < 8+tailLen+4 {
		return lay, ipcErrorf("the file is too short")
	}
	var tail [tailLen]byte
	if _, err := r.ReadAt(tail[:], size-tailLen); err != nil {
		return lay, fmt.Errorf("cannot read the Arrow footer: %w", err)
	}
	if !bytes.Equal(tail[4:], arrowMagic) {
		return lay, ipcErrorf("the magic bytes ARROW1 are missing at the end (a truncated file, or an Arrow stream: name streams .arrows)")
	}
	n := int64(int32(binary.LittleEndian.Uint32(tail[:4])))
	footerEnd := size - tailLen
	if n <= 0 || n > footerEnd-8 {
		return lay, ipcErrorf("the footer claims %d bytes, the file holds %d", n, footerEnd-8)
	}
	if n > int64(lim.MaxMetadataBytes) {
		return lay, limitError("the Arrow footer is %s, more than the limit of %s", sizeString(n), sizeString(int64(lim.MaxMetadataBytes)))
	}
	fb := make([]byte, n)
	if _, err := r.ReadAt(fb, footerEnd-n); err != nil {
		return lay, fmt.Errorf("cannot read the Arrow footer: %w", err)
	}
	v := &fbVerifier{b: fb, budget: 4*lim.MaxColumns + 1024}
	footer, err := v.root()
	if err != nil {
		return lay, err
	}
	// Footer: version, schema, dictionaries, recordBatches, custom_metadata.
	if err := footer.scalars(0, 2); err != nil {
		return lay, err
	}
	sc, ok, err := footer.table(1)
	if err != nil {
		return lay, err
	}
	if !ok {
		return lay, ipcErrorf("the footer has no schema")
	}
	if err := checkFBSchema(sc, lim); err != nil {
		return lay, err
	}
	if err := footer.keyValues(4); err != nil {
		return lay, err
	}
	dataEnd := footerEnd - n // messages lie between the leading magic and here
	for slot, want := range []int{2, 3} {
		start, count, _, err := footer.vector(want, 24)
		if err != nil {
			return lay, err
		}
		for i := range count {
			p := start + 24*i
			off := int64(binary.LittleEndian.Uint64(fb[p:]))
			meta := int64(int32(binary.LittleEndian.Uint32(fb[p+8:])))
			body := int64(binary.LittleEndian.Uint64(fb[p+16:]))
			if err := checkIPCBlock(r, off, meta, body, dataEnd, slot == 0, lim, &lay); err != nil {
				what := "record batch"
				if slot == 0 {
					what = "dictionary"
				}
				return lay, fmt.Errorf("%s %d: %w", what, i, err)
			}
		}
	}
	return lay, nil
}

// checkIPCBlock checks one message of the file: the block (offset,
// metadata and body lengths) against the data region, then its metadata.
func checkIPCBlock(r io.ReaderAt, off, meta, body, dataEnd int64, dict bool, lim Limits, lay *ipcLayout) error {
	switch {
	case off < 8 || off%8 != 0:
		return ipcErrorf("the block offset %d is invalid", off)
	case meta < 8 || meta%8 != 0:
		return ipcErrorf("the metadata length %d is invalid", meta)
	case body < 0 || body%8 != 0:
		return ipcErrorf("the body length %d is invalid", body)
	case off > dataEnd || meta > dataEnd-off || body > dataEnd-off-meta:
		return ipcErrorf("the block (offset %d, %d+%d bytes) lies beyond the data (%d bytes)", off, meta, body, dataEnd)
	case meta > int64(lim.MaxMetadataBytes):
		return limitError("an Arrow message's metadata is %s, more than the limit of %s", sizeString(meta), sizeString(int64(lim.MaxMetadataBytes)))
	}
	mb := make([]byte, meta)
	if _, err := r.ReadAt(mb, off); err != nil {
		return fmt.Errorf("cannot read a message: %w", err)
	}
	prefix := 4 // before 0.15: the length alone
	if binary.LittleEndian.Uint32(mb) == 0xFFFFFFFF {
		prefix = 8
	}
	if l := int64(binary.LittleEndian.Uint32(mb[prefix-4:])); l != meta-int64(prefix) {
		return ipcErrorf("the message length %d does not match the block's %d", l, meta-int64(prefix))
	}
	return checkIPCMessage(r, mb[prefix:], off+meta, body, dict, lim, lay)
}

// checkIPCMessage checks one message's flatbuffer (a Message table whose
// header is a record or dictionary batch) and, through r, the size
// prefixes of its compressed buffers (the body starts at bodyOff).
func checkIPCMessage(r io.ReaderAt, fb []byte, bodyOff, body int64, dict bool, lim Limits, lay *ipcLayout) error {
	v := &fbVerifier{b: fb, budget: 64}
	msg, err := v.root()
	if err != nil {
		return err
	}
	// Message: version, header_type, header, bodyLength, custom_metadata.
	if err := msg.scalars(0, 2, 1, 1, 3, 8); err != nil {
		return err
	}
	if err := msg.keyValues(4); err != nil {
		return err
	}
	ht := msg.u8(1)
	if bl := msg.i64(3); bl != body {
		return ipcErrorf("the message body is %d bytes, its block says %d", bl, body)
	}
	h, ok, err := msg.table(2)
	if err != nil {
		return err
	}
	if !ok {
		return ipcErrorf("a message has no header")
	}
	rb := h
	switch {
	case dict && ht == 2: // DictionaryBatch: id, data, isDelta
		if err := h.scalars(0, 8, 2, 1); err != nil {
			return err
		}
		if rb, ok, err = h.table(1); err != nil {
			return err
		} else if !ok {
			return ipcErrorf("a dictionary batch has no data")
		}
	case !dict && ht == 3: // RecordBatch
	default:
		return ipcErrorf("a message of type %d where a %s was expected", ht, map[bool]string{true: "dictionary batch", false: "record batch"}[dict])
	}
	// RecordBatch: length, nodes, buffers, compression, variadicBufferCounts.
	if err := rb.scalars(0, 8); err != nil {
		return err
	}
	rows := rb.i64(0)
	if rows < 0 || rows > 8*body+ipcNullRowsFloor {
		return ipcErrorf("a batch claims %d rows in a body of %d bytes", rows, body)
	}
	nStart, nCount, _, err := rb.vector(1, 16)
	if err != nil {
		return err
	}
	for i := range nCount {
		p := nStart + 16*i
		l := int64(binary.LittleEndian.Uint64(fb[p:]))
		nulls := int64(binary.LittleEndian.Uint64(fb[p+8:]))
		if l < 0 || l > 8*body+ipcNullRowsFloor || nulls < 0 || nulls > l {
			return ipcErrorf("field node %d claims %d values (%d nulls) in a body of %d bytes", i, l, nulls, body)
		}
	}
	bStart, bCount, _, err := rb.vector(2, 16)
	if err != nil {
		return err
	}
	comp, compressed, err := rb.table(3)
	if err != nil {
		return err
	}
	if compressed {
		if err := comp.scalars(0, 1, 1, 1); err != nil {
			return err
		}
		if c := comp.u8(0); c > 1 {
			return ipcErrorf("unknown body compression codec %d", c)
		}
		lay.compressed = true
	}
	if _, _, _, err := rb.vector(4, 8); err != nil {
		return err
	}
	for i := range bCount {
		p := bStart + 16*i
		o := int64(binary.LittleEndian.Uint64(fb[p:]))
		l := int64(binary.LittleEndian.Uint64(fb[p+8:]))
		if o < 0 || l < 0 || o > body || l > body-o {
			return ipcErrorf("buffer %d (offset %d, %d bytes) lies beyond the body (%d bytes)", i, o, l, body)
		}
		if !compressed || l == 0 {
			continue
		}
		if l < 8 {
			return ipcErrorf("compressed buffer %d is %d bytes, shorter than its size prefix", i, l)
		}
		var pre [8]byte
		if _, err := r.ReadAt(pre[:], bodyOff+o); err != nil {
			return fmt.Errorf("cannot read a message body: %w", err)
		}
		u := int64(binary.LittleEndian.Uint64(pre[:]))
		if u == -1 { // stored uncompressed
			continue
		}
		bound := int64(lim.MaxCompressionRatio*float64(l)) + 1<<20
		if u < 0 || u > bound {
			return limitError("a compressed Arrow buffer of %d bytes claims to inflate to %d bytes, more than the ratio limit of %g", l, u, lim.MaxCompressionRatio)
		}
		lay.inflated += u
		if lay.inflated > lim.MaxDecompressedBytes {
			return limitError("the Arrow file inflates to more than the limit of %s", sizeString(lim.MaxDecompressedBytes))
		}
	}
	lay.bodies += body
	if !dict {
		if rows > math.MaxInt64-lay.rows {
			return ipcErrorf("the row count overflows")
		}
		lay.rows += rows
		lay.batches = append(lay.batches, rows)
	}
	return nil
}

// checkFBSchema checks a Schema table: endianness, fields (recursively),
// custom_metadata, features; at most MaxColumns fields in all.
func checkFBSchema(sc fbTable, lim Limits) error {
	if err := sc.scalars(0, 2); err != nil {
		return err
	}
	if err := sc.keyValues(2); err != nil {
		return err
	}
	if _, _, _, err := sc.vector(3, 8); err != nil {
		return err
	}
	fields := 0
	return sc.tables(1, func(f fbTable) error { return checkFBField(f, 1, &fields, lim) })
}

// ipcTypeSlots lists, per flatbuffer Type union member, the sizes of its
// table's scalar fields (0: an offset to a string or vector, checked
// separately).
var ipcTypeSlots = map[uint8][]int{
	2:  {4, 1},    // Int: bitWidth, is_signed
	3:  {2},       // FloatingPoint: precision
	7:  {4, 4, 4}, // Decimal: precision, scale, bitWidth
	8:  {2},       // Date: unit
	9:  {2, 4},    // Time: unit, bitWidth
	10: {2, 0},    // Timestamp: unit, timezone
	11: {2},       // Interval: unit
	14: {2, 0},    // Union: mode, typeIds
	15: {4},       // FixedSizeBinary: byteWidth
	16: {4},       // FixedSizeList: listSize
	17: {1},       // Map: keysSorted
	18: {2},       // Duration: unit
}

// checkFBField checks a Field table: name, nullable, type_type, type,
// dictionary, children (recursively), custom_metadata.
func checkFBField(f fbTable, depth int, count *int, lim Limits) error {
	if depth > ipcMaxDepth {
		return ipcErrorf("fields nest deeper than %d levels", ipcMaxDepth)
	}
	if *count++; *count > lim.MaxColumns {
		return limitError("the Arrow schema has more than %d fields (nested ones included)", lim.MaxColumns)
	}
	if _, _, _, err := f.vector(0, 1); err != nil {
		return err
	}
	if err := f.scalars(1, 1, 2, 1); err != nil {
		return err
	}
	tt := f.u8(2)
	if tt == 0 || tt > 26 {
		return ipcErrorf("unknown field type %d", tt)
	}
	t, ok, err := f.table(3)
	if err != nil {
		return err
	}
	if !ok {
		return ipcErrorf("a field has no type")
	}
	for slot, size := range ipcTypeSlots[tt] {
		switch {
		case size > 0:
			err = t.scalars(slot, size)
		case tt == 10:
			_, _, _, err = t.vector(slot, 1)
		default:
			_, _, _, err = t.vector(slot, 4)
		}
		if err != nil {
			return err
		}
	}
	d, ok, err := f.table(4)
	if err != nil {
		return err
	}
	if ok { // DictionaryEncoding: id, indexType (Int), isOrdered, dictionaryKind
		if err := d.scalars(0, 8, 2, 1, 3, 2); err != nil {
			return err
		}
		it, ok, err := d.table(1)
		if err != nil {
			return err
		}
		if ok {
			if err := it.scalars(0, 4, 1, 1); err != nil {
				return err
			}
		}
	}
	if err := f.keyValues(6); err != nil {
		return err
	}
	return f.tables(5, func(c fbTable) error { return checkFBField(c, depth+1, count, lim) })
}

// fbVerifier checks flatbuffer tables, vectors and strings in b: every
// offset lands inside b and every vector fits. budget bounds the tables
// visited (a hostile buffer may point many offsets at one table).
type fbVerifier struct {
	b      []byte
	budget int
}

// fbTable is a table whose header and vtable were checked.
type fbTable struct {
	v      *fbVerifier
	pos    int
	vt     int
	vtSize int
	size   int
}

func (v *fbVerifier) u32(p int) (uint32, error) {
	if p < 0 || p > len(v.b)-4 {
		return 0, ipcErrorf("a flatbuffer offset %d lies outside its %d bytes", p, len(v.b))
	}
	return binary.LittleEndian.Uint32(v.b[p:]), nil
}

// root returns the root table.
func (v *fbVerifier) root() (fbTable, error) {
	o, err := v.u32(0)
	if err != nil {
		return fbTable{}, err
	}
	return v.tableAt(int64(o))
}

// tableAt checks the table at p: its vtable and its extent.
func (v *fbVerifier) tableAt(p int64) (fbTable, error) {
	if v.budget--; v.budget < 0 {
		return fbTable{}, ipcErrorf("the metadata holds too many tables")
	}
	n := int64(len(v.b))
	if p < 0 || p > n-4 {
		return fbTable{}, ipcErrorf("a flatbuffer table offset %d lies outside its %d bytes", p, n)
	}
	vt := p - int64(int32(binary.LittleEndian.Uint32(v.b[p:])))
	if vt < 0 || vt > n-4 {
		return fbTable{}, ipcErrorf("a flatbuffer vtable offset %d lies outside its %d bytes", vt, n)
	}
	vtSize := int64(binary.LittleEndian.Uint16(v.b[vt:]))
	size := int64(binary.LittleEndian.Uint16(v.b[vt+2:]))
	if vtSize < 4 || vtSize%2 != 0 || vtSize > n-vt || size < 4 || size > n-p {
		return fbTable{}, ipcErrorf("a flatbuffer table at %d does not fit its %d bytes", p, n)
	}
	return fbTable{v: v, pos: int(p), vt: int(vt), vtSize: int(vtSize), size: int(size)}, nil
}

// field returns the position of field slot (size bytes), or ok false when
// the table does not have it.
func (t fbTable) field(slot, size int) (p int, ok bool, err error) {
	e := 4 + 2*slot
	if e+2 > t.vtSize {
		return 0, false, nil
	}
	o := int(binary.LittleEndian.Uint16(t.v.b[t.vt+e:]))
	if o == 0 {
		return 0, false, nil
	}
	if o+size > t.size {
		return 0, false, ipcErrorf("a flatbuffer field lies outside its table")
	}
	return t.pos + o, true, nil
}

// scalars checks (slot, size) pairs of scalar fields.
func (t fbTable) scalars(pairs ...int) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		if _, _, err := t.field(pairs[i], pairs[i+1]); err != nil {
			return err
		}
	}
	return nil
}

func (t fbTable) u8(slot int) uint8 {
	if p, ok, _ := t.field(slot, 1); ok {
		return t.v.b[p]
	}
	return 0
}

func (t fbTable) i64(slot int) int64 {
	if p, ok, _ := t.field(slot, 8); ok {
		return int64(binary.LittleEndian.Uint64(t.v.b[p:]))
	}
	return 0
}

// target follows the offset in field slot.
func (t fbTable) target(slot int) (int64, bool, error) {
	p, ok, err := t.field(slot, 4)
	if !ok || err != nil {
		return 0, ok, err
	}
	return int64(p) + int64(binary.LittleEndian.Uint32(t.v.b[p:])), true, nil
}

// table returns the sub-table in field slot.
func (t fbTable) table(slot int) (fbTable, bool, error) {
	p, ok, err := t.target(slot)
	if !ok || err != nil {
		return fbTable{}, ok, err
	}
	sub, err := t.v.tableAt(p)
	return sub, err == nil, err
}

// vector checks the vector (or string, elem 1) in field slot: its
// elements start at start and there are n of elem bytes each.
func (t fbTable) vector(slot, elem int) (start, n int, ok bool, err error) {
	p, ok, err := t.target(slot)
	if !ok || err != nil {
		return 0, 0, ok, err
	}
	l := int64(len(t.v.b))
	if p > l-4 {
		return 0, 0, false, ipcErrorf("a flatbuffer vector offset %d lies outside its %d bytes", p, l)
	}
	count := int64(binary.LittleEndian.Uint32(t.v.b[p:]))
	if count*int64(elem) > l-p-4 {
		return 0, 0, false, ipcErrorf("a flatbuffer vector of %d elements does not fit its %d bytes", count, l)
	}
	return int(p + 4), int(count), true, nil
}

// tables checks the vector of tables in field slot and calls each on them.
func (t fbTable) tables(slot int, each func(fbTable) error) error {
	start, n, _, err := t.vector(slot, 4)
	if err != nil {
		return err
	}
	for i := range n {
		e := start + 4*i
		sub, err := t.v.tableAt(int64(e) + int64(binary.LittleEndian.Uint32(t.v.b[e:])))
		if err != nil {
			return err
		}
		if err := each(sub); err != nil {
			return err
		}
	}
	return nil
}

// keyValues checks a custom_metadata vector of KeyValue tables (key, value).
func (t fbTable) keyValues(slot int) error {
	return t.tables(slot, func(kv fbTable) error {
		if _, _, _, err := kv.vector(0, 1); err != nil {
			return err
		}
		_, _, _, err := kv.vector(1, 1)
		return err
	})
}
