//go:build cgo && !nohdf5

package hdf5

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/internal/h5"
	"github.com/quarrydb/quarry/internal/h5/h5write"
)

// recordDataset is one compound dataset of the record-reader differential
// test.
type recordDataset struct {
	path   string
	rich   bool // every member kind (else only native fixed-size members)
	dims   []int64
	opts   *h5write.DatasetOptions
	blocks [][2]int64 // rows written (start, count); nil = all
	// direct: whole records are decoded from the chunks (else one H5Dread
	// of the members' memory compound).
	direct bool
}

var recordDatasets = []recordDataset{
	{path: "/c/rich", rich: true, dims: []int64{97}},
	{path: "/z/rich", rich: true, dims: []int64{97}, opts: &h5write.DatasetOptions{Chunk: []int64{13}, Gzip: 3, Shuffle: true}},
	{path: "/c/native", dims: []int64{97}},
	{path: "/u/native", dims: []int64{97}, opts: &h5write.DatasetOptions{Chunk: []int64{10}}},
	{path: "/z/native", dims: []int64{97}, opts: &h5write.DatasetOptions{Chunk: []int64{13}, Gzip: 3, Shuffle: true, Fletcher32: true}, direct: true},
	{path: "/p/native", dims: []int64{97}, opts: &h5write.DatasetOptions{Chunk: []int64{8}, Gzip: 1}, blocks: [][2]int64{{3, 20}, {60, 9}}, direct: true},
	{path: "/g/native", dims: []int64{12, 9}, opts: &h5write.DatasetOptions{Chunk: []int64{5, 4}, Gzip: 2, Shuffle: true}, direct: true},
	{path: "/s/native", opts: &h5write.DatasetOptions{Scalar: true}},
	{path: "/e/native", dims: []int64{0}, opts: &h5write.DatasetOptions{Chunk: []int64{8}, MaxDims: []int64{h5.Unlimited}, Gzip: 1}, direct: true},
}

// recordMember is one member of the generated compound types: its file
// type and a writer of row i's bytes at the member's offset.
type recordMember struct {
	name string
	typ  h5.ID
	size int
	put  func(b []byte, i int, rng *rand.Rand)
}

// recordType builds the compound type of the fixtures: every kind a
// compound member can have (rich) or only native fixed-size ones, nested
// compounds, arrays, enums with values outside the enum, strings of every
// padding, big-endian numbers, a vlen string and an opaque member.
func recordType(b *builder, rich bool, cs *h5write.CStrings) (h5.ID, int, []recordMember) {
	i64 := b.t(h5.NewInt(8, true))
	u16 := b.t(h5.NewInt(2, false))
	f32 := b.t(h5.NewFloat(4))
	f64 := b.t(h5.NewFloat(8))
	i8 := b.t(h5.NewInt(1, true))
	i16 := b.t(h5.NewInt(2, true))
	boolT := b.id(h5write.NewBoolType())
	color := b.id(h5.NewEnum(i16, []h5.EnumMember{{Name: "RED", Value: 0}, {Name: "GREEN", Value: 1}, {Name: "BLUE", Value: 5}}))
	vec := b.id(h5.NewArray(f32, []int64{3}))
	mat := b.id(h5.NewArray(i16, []int64{2, 2}))
	s3 := b.t(h5.NewString(3, false, h5.StrNullPad))
	inner := b.id(h5.NewCompound(4, []h5.MemberSpec{{Name: "k", Offset: 0, Type: i8}, {Name: "s", Offset: 1, Type: s3}}))
	pos := b.id(h5.NewCompound(12, []h5.MemberSpec{{Name: "x", Offset: 0, Type: f64}, {Name: "inner", Offset: 8, Type: inner}}))
	le := binary.LittleEndian
	word := func(rng *rand.Rand, i int) uint64 {
		if i%3 == 0 {
			return uint64(i) * 0x0101
		}
		return rng.Uint64()
	}
	str := func(size int) func(b []byte, i int, rng *rand.Rand) {
		return func(b []byte, i int, rng *rand.Rand) {
			for k := range size {
				switch c := rng.IntN(9); {
				case k >= rng.IntN(size+1):
					b[k] = " \x00"[c%2]
				case c == 0:
					b[k] = 0
				case c == 1:
					b[k] = ' '
				default:
					b[k] = "abcxyz\xc3\xa9Q"[c]
				}
			}
		}
	}
	ms := []recordMember{
		{"id", i64, 8, func(b []byte, i int, rng *rand.Rand) { le.PutUint64(b, word(rng, i)) }},
		{"u", u16, 2, func(b []byte, i int, rng *rand.Rand) { le.PutUint16(b, uint16(word(rng, i))) }},
		{"f", f32, 4, func(b []byte, i int, rng *rand.Rand) {
			v := float32(rng.NormFloat64())
			switch i % 11 {
			case 1:
				v = float32(math.NaN())
			case 2:
				v = float32(math.Inf(-1))
			}
			le.PutUint32(b, math.Float32bits(v))
		}},
		{"flag", boolT, 1, func(b []byte, i int, rng *rand.Rand) { b[0] = byte(i % 2) }},
		{"color", color, 2, func(b []byte, i int, rng *rand.Rand) { le.PutUint16(b, uint16([]int16{0, 1, 5, 9}[i%4])) }},
		{"tagN", b.t(h5.NewString(6, false, h5.StrNullTerm)), 6, str(6)},
		{"tagP", b.t(h5.NewString(6, false, h5.StrNullPad)), 6, str(6)},
		{"tagS", b.t(h5.NewString(6, true, h5.StrSpacePad)), 6, str(6)},
		{"tag20", b.t(h5.NewString(20, false, h5.StrNullPad)), 20, str(20)},
		{"vec", vec, 12, func(b []byte, i int, rng *rand.Rand) {
			for k := range 3 {
				le.PutUint32(b[4*k:], math.Float32bits(float32(i*10+k)))
			}
		}},
		{"mat", mat, 8, func(b []byte, i int, rng *rand.Rand) { le.PutUint64(b, word(rng, i)) }},
		{"pos", pos, 12, func(b []byte, i int, rng *rand.Rand) {
			le.PutUint64(b, math.Float64bits(float64(i)/3))
			b[8] = byte(i)
			str(3)(b[9:], i, rng)
		}},
	}
	if rich {
		i32be := b.t(h5.NewInt(4, true))
		b.check(h5.SetBigEndian(i32be, true))
		f64be := b.t(h5.NewFloat(8))
		b.check(h5.SetBigEndian(f64be, true))
		ms = append(ms,
			recordMember{"i32be", i32be, 4, func(b []byte, i int, rng *rand.Rand) { binary.BigEndian.PutUint32(b, uint32(i*1000-7)) }},
			recordMember{"f64be", f64be, 8, func(b []byte, i int, rng *rand.Rand) {
				binary.BigEndian.PutUint64(b, math.Float64bits(float64(i)*-1.5))
			}},
			recordMember{"note", b.t(h5.NewString(-1, true, h5.StrNullTerm)), 8, func(b []byte, i int, rng *rand.Rand) {
				le.PutUint64(b, uint64(cs.Ptr(i)))
			}},
			recordMember{"blob", b.id(h5.NewOpaque(3, "raw")), 3, func(b []byte, i int, rng *rand.Rand) { copy(b, []byte{1, 2, byte(i)}) }},
		)
	}
	specs := make([]h5.MemberSpec, len(ms))
	off := 0
	for k, m := range ms {
		specs[k] = h5.MemberSpec{Name: m.name, Offset: off, Type: m.typ}
		off += m.size
	}
	return b.id(h5.NewCompound(off, specs)), off, ms
}

// writeRecordFixtures writes recordDatasets into a new file.
func writeRecordFixtures(t *testing.T, path string) {
	t.Helper()
	b := &builder{}
	defer b.closeAll()
	f := b.id(h5write.CreateFile(path))
	for _, g := range []string{"/c", "/z", "/u", "/p", "/g", "/s", "/e"} {
		b.id(h5write.CreateGroup(f, g))
	}
	notes := make([]string, 200)
	for i := range notes {
		notes[i] = fmt.Sprintf("note %d ✓", i)
		if i%5 == 0 {
			notes[i] = ""
		}
	}
	cs := h5write.NewCStrings(notes)
	defer cs.Free()
	rng := rand.New(rand.NewPCG(5, 6))
	for _, ds := range recordDatasets {
		typ, size, ms := recordType(b, ds.rich, cs)
		if b.err != nil {
			t.Fatal(b.err)
		}
		n := 1
		for _, d := range ds.dims {
			n *= int(d)
		}
		buf := make([]byte, max(n, 1)*size)
		for i := range n {
			off := 0
			for _, m := range ms {
				m.put(buf[i*size+off:i*size+off+m.size], i, rng)
				off += m.size
			}
		}
		d := b.id(h5write.CreateDataset(f, ds.path, typ, ds.dims, ds.opts))
		switch {
		case n == 0:
		case ds.blocks == nil:
			b.check(h5write.Write(d, typ, unsafe.Pointer(&buf[0])))
		default:
			for _, bl := range ds.blocks {
				b.check(h5write.WriteSlab(d, typ, []int64{bl[0]}, []int64{bl[1]}, unsafe.Pointer(&buf[bl[0]*int64(size)])))
			}
		}
	}
	if b.err != nil {
		t.Fatal(b.err)
	}
}

// sameArrays requires a and b to be equal buffer for buffer (lengths and
// bytes), recursively through children.
func sameArrays(t *testing.T, what string, a, b arrow.ArrayData) {
	t.Helper()
	if !arrow.TypeEqual(a.DataType(), b.DataType()) || a.Len() != b.Len() || a.Offset() != b.Offset() || a.NullN() != b.NullN() {
		t.Fatalf("%s: %s len %d nulls %d vs %s len %d nulls %d", what, a.DataType(), a.Len(), a.NullN(), b.DataType(), b.Len(), b.NullN())
	}
	ab, bb := a.Buffers(), b.Buffers()
	if len(ab) != len(bb) {
		t.Fatalf("%s: %d vs %d buffers", what, len(ab), len(bb))
	}
	for i := range ab {
		if (ab[i] == nil) != (bb[i] == nil) {
			t.Fatalf("%s: buffer %d present %v vs %v", what, i, ab[i] != nil, bb[i] != nil)
		}
		if ab[i] != nil && !bytes.Equal(ab[i].Bytes(), bb[i].Bytes()) {
			t.Fatalf("%s: buffer %d differs (%d vs %d bytes)", what, i, ab[i].Len(), bb[i].Len())
		}
	}
	ac, bc := a.Children(), b.Children()
	if len(ac) != len(bc) {
		t.Fatalf("%s: %d vs %d children", what, len(ac), len(bc))
	}
	for i := range ac {
		sameArrays(t, fmt.Sprintf("%s.%d", what, i), ac[i], bc[i])
	}
}

// TestRecordReaderSliceMatchesPerMember reads compound slices with one read
// for all members (recordReader) and member by member, over every layout,
// and requires identical buffers.
func TestRecordReaderSliceMatchesPerMember(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "records.h5")
	writeRecordFixtures(t, path)
	fid, err := h5.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer h5.Close(fid)
	slices1d := []string{"", "::3", "5:47:4", "7", "10:10", "-3:", "90:", "12:13"}
	slices2d := []string{"", "1:11:3, ::2", "4, 2:7", "3:3, :", "::5, 8"}
	for _, ds := range recordDatasets {
		t.Run(ds.path, func(t *testing.T) {
			did, err := h5.OpenDataset(fid, ds.path, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer h5.Close(did)
			info, err := h5.GetDatasetInfo(did)
			if err != nil {
				t.Fatal(err)
			}
			typ, err := h5.DatasetType(did)
			if err != nil {
				t.Fatal(err)
			}
			lf := mapType(typ)
			perMember, err := newLeafReader(lf, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer perMember.close()
			whole, err := newLeafReader(lf, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer whole.close()
			whole.useChunkReader(did, info)
			if whole.rec == nil {
				t.Fatal("no record reader")
			}
			if (whole.rec.chunks != nil) != ds.direct {
				t.Fatalf("direct chunk decoding = %v, want %v", whole.rec.chunks != nil, ds.direct)
			}
			sls := slices1d
			switch {
			case len(ds.dims) == 0:
				sls = []string{""}
			case len(ds.dims) == 2:
				sls = slices2d
			case ds.dims[0] == 0:
				sls = []string{"", "::3", "10:10", "-3:"}
			}
			for _, sl := range sls {
				sel, err := h5.ParseSlice(sl, ds.dims)
				if err != nil {
					t.Fatal(err)
				}
				alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
				n := int(sel.NumElements())
				want, err := perMember.read(did, sel.Hyperslab(), n, alloc)
				if err != nil {
					t.Fatal(err)
				}
				got, err := whole.read(did, sel.Hyperslab(), n, alloc)
				if err != nil {
					t.Fatal(err)
				}
				sameArrays(t, ds.path+"["+sl+"]", got.Data(), want.Data())
				got.Release()
				want.Release()
				alloc.AssertSize(t, 0)
			}
		})
	}
}

// TestRecordReaderScanMatchesPerMember scans the compound tables with
// several projections and batch sizes and compares every column with a
// member-by-member read of the whole table.
func TestRecordReaderScanMatchesPerMember(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "records.h5")
	writeRecordFixtures(t, path)
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	f := NewFormat()
	defer f.Close()
	dss, err := f.Open(context.Background(), catalog.FileInfo{AbsPath: path, RelPath: "records.h5", BaseID: "records", Size: st.Size(), ModTime: st.ModTime()})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*catalog.Dataset{}
	for _, ds := range dss {
		byID[ds.ID] = ds
	}
	fid, err := h5.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer h5.Close(fid)
	projections := [][]string{
		nil,
		{"pos.inner.s", "id"},
		{"tagP"},
		{"flag", "color", "vec", "mat", "pos.x"},
		{"note", "u", "blob"},
		{"note"},
	}
	for _, ds := range recordDatasets {
		if len(ds.dims) != 1 {
			continue
		}
		id := "records" + ds.path
		cd, ok := byID[id]
		if !ok {
			t.Fatalf("no table %s", id)
		}
		did, err := h5.OpenDataset(fid, ds.path, 0)
		if err != nil {
			t.Fatal(err)
		}
		typ, err := h5.DatasetType(did)
		if err != nil {
			t.Fatal(err)
		}
		cols := flatten(typ)
		for _, proj := range projections {
			if !ds.rich && (len(proj) > 0 && (proj[0] == "note")) {
				continue
			}
			for _, batch := range []int{0, 7, 13, 40} {
				t.Run(fmt.Sprintf("%s/%v/%d", ds.path, proj, batch), func(t *testing.T) {
					alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
					defer alloc.AssertSize(t, 0)
					rr, err := cd.Source.Scan(context.Background(), catalog.ScanOptions{Columns: proj, BatchSize: batch, Alloc: alloc})
					if err != nil {
						t.Fatal(err)
					}
					var batches []arrow.RecordBatch
					for rr.Next() {
						rec := rr.RecordBatch()
						rec.Retain()
						batches = append(batches, rec)
					}
					if err := rr.Err(); err != nil {
						t.Fatal(err)
					}
					schema := rr.Schema()
					rr.Release()
					defer func() {
						for _, b := range batches {
							b.Release()
						}
					}()
					for c, fld := range schema.Fields() {
						var fc *flatColumn
						for k := range cols {
							if cols[k].name == fld.Name {
								fc = &cols[k]
							}
						}
						if fc == nil {
							t.Fatalf("unknown column %s", fld.Name)
						}
						lr, err := newLeafReader(fc.lf, fc.member)
						if err != nil {
							t.Fatal(err)
						}
						n := int(ds.dims[0])
						want, err := lr.read(did, h5.Hyperslab{Start: []int64{0}, Count: []int64{int64(n)}}, n, alloc)
						lr.close()
						if err != nil {
							t.Fatal(err)
						}
						// Compare the JSON of every value (exact, NaN included).
						var gotJSON, wantJSON []byte
						for _, b := range batches {
							col := b.Column(c)
							for i := range col.Len() {
								gotJSON = append(appendElem(gotJSON, col, i, fc.lf), ',')
							}
						}
						for i := range want.Len() {
							wantJSON = append(appendElem(wantJSON, want, i, fc.lf), ',')
						}
						want.Release()
						if !bytes.Equal(gotJSON, wantJSON) {
							t.Fatalf("column %s differs:\n%.400s\n%.400s", fld.Name, gotJSON, wantJSON)
						}
					}
				})
			}
		}
		h5.Close(did)
	}
}

// TestFixedSizeLeavesDirectAndPipelined reads fixed-length strings, enums,
// booleans and arrays from compressed datasets (decoded chunk by chunk) and
// from contiguous twins (H5Dread), in selections large enough to be read
// and packed block by block, and requires identical buffers.
func TestFixedSizeLeavesDirectAndPipelined(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "leaves.h5")
	const rows = pipelineBlockElems*2 + 4321
	b := &builder{}
	u8 := b.t(h5.NewInt(1, false))
	f32 := b.t(h5.NewFloat(4))
	types := map[string]h5.ID{
		"nullpad":  b.t(h5.NewString(11, false, h5.StrNullPad)),
		"nullterm": b.t(h5.NewString(5, true, h5.StrNullTerm)),
		"spacepad": b.t(h5.NewString(19, false, h5.StrSpacePad)),
		"enum":     b.id(h5.NewEnum(u8, []h5.EnumMember{{Name: "LOW", Value: 1}, {Name: "HIGH", Value: 200}})),
		"bool":     b.id(h5write.NewBoolType()),
		"array":    b.id(h5.NewArray(f32, []int64{2})),
	}
	sizes := map[string]int{"nullpad": 11, "nullterm": 5, "spacepad": 19, "enum": 1, "bool": 1, "array": 8}
	f := b.id(h5write.CreateFile(path))
	b.id(h5write.CreateGroup(f, "/z"))
	b.id(h5write.CreateGroup(f, "/c"))
	rng := rand.New(rand.NewPCG(9, 10))
	for name, typ := range types {
		size := sizes[name]
		buf := make([]byte, rows*size)
		for i := range rows {
			e := buf[i*size : (i+1)*size]
			switch name {
			case "enum":
				e[0] = []byte{1, 200, 7}[i%3]
			case "bool":
				e[0] = byte(rng.IntN(2))
			case "array":
				binary.LittleEndian.PutUint32(e, math.Float32bits(float32(i)))
				binary.LittleEndian.PutUint32(e[4:], math.Float32bits(float32(rng.NormFloat64())))
			default:
				l := rng.IntN(size + 1)
				for k := range e {
					switch {
					case k < l:
						e[k] = "ab \x00ZΩ"[rng.IntN(7)]
					case name == "spacepad":
						e[k] = ' '
					}
				}
			}
		}
		for _, g := range []string{"/z/", "/c/"} {
			var o *h5write.DatasetOptions
			if g == "/z/" {
				o = &h5write.DatasetOptions{Chunk: []int64{10000}, Gzip: 1, Shuffle: true}
			}
			d := b.id(h5write.CreateDataset(f, g+name, typ, []int64{rows}, o))
			b.check(h5write.Write(d, typ, unsafe.Pointer(&buf[0])))
		}
	}
	b.closeAll()
	if b.err != nil {
		t.Fatal(b.err)
	}
	assertDirectNames(t, path, []string{"nullpad", "nullterm", "spacepad", "enum", "bool", "array"})
	fm := NewFormat(WithRoot(dir))
	defer fm.Close()
	for name := range types {
		for _, sl := range []string{"", "::3", "7:200000:5", "131071:131075", "5"} {
			t.Run(name+"["+sl+"]", func(t *testing.T) {
				alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer alloc.AssertSize(t, 0)
				z, err := fm.ReadSlice(context.Background(), path, "/z/"+name, sl, alloc)
				if err != nil {
					t.Fatal(err)
				}
				defer z.Release()
				c, err := fm.ReadSlice(context.Background(), path, "/c/"+name, sl, alloc)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Release()
				sameArrays(t, name, z.Values.Data(), c.Values.Data())
			})
		}
	}
}

// assertDirectNames checks that the compressed datasets /z/<name> qualify
// for direct chunk decoding with their native memory type.
func assertDirectNames(t *testing.T, path string, names []string) {
	t.Helper()
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	assertDirect(t, path, want)
}
