//go:build cgo && !nohdf5

package hdf5

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/internal/h5"
	"github.com/quarrydb/quarry/internal/h5/h5write"
)

// Fixture values, shared by the tests that check what was read.
const tableRows = 100

func fxX(i int) float64      { return float64(i) * 0.5 }
func fxY(i int) int32        { return int32(i - 50) }
func fxFlag(i int) bool      { return i%3 == 0 }
func fxName(i int) string    { return fmt.Sprintf("row-%d-Գեղարդ", i) }
func fxU64(i int) uint64     { return 1<<60 + uint64(i) }
func fxI16(i int) int16      { return int16(-i) }
func fxF32(i int) float32    { return float32(i) * 1.25 }
func fxColorVal(i int) int16 { return [...]int16{0, 1, 5}[i%3] }
func fxColor(i int) string   { return [...]string{"RED", "GREEN", "BLUE"}[i%3] }
func fxCode(i int) string {
	if i == 7 {
		return "abcd" // fills the fixed string: no terminator
	}
	return fmt.Sprintf("c%d", i%100)
}

const eventRows = 50

func evID(i int) int64       { return int64(i) * 1000 }
func evX(i int) float64      { return float64(i) + 0.25 }
func evY(i int) float64      { return -float64(i) }
func evVec(i, k int) float32 { return float32(i*10 + k) }
func evFlag(i int) bool      { return i%2 == 1 }
func evTag(i int) string     { return fmt.Sprintf("t%02d", i) }
func evLabel(i int) string   { return fmt.Sprintf("event %d ✓", i) }

func matrixVal(i, j int) float64 { return float64(i*10 + j) }

// fixtures is a data root with every layout and type the format handles.
type fixtures struct {
	dir   string // data root
	main  string // root/all.h5
	other string // root/other.h5 (external link target)
}

var (
	fxOnce sync.Once
	fxVal  *fixtures
	fxErr  error
)

// sharedFixtures builds the fixture files once per test binary.
func sharedFixtures(t testing.TB) *fixtures {
	t.Helper()
	fxOnce.Do(func() {
		dir, err := os.MkdirTemp("", "quarry-hdf5-fixtures-")
		if err != nil {
			fxErr = err
			return
		}
		fxVal, fxErr = buildFixtures(dir)
	})
	if fxErr != nil {
		t.Fatalf("building fixtures: %v", fxErr)
	}
	return fxVal
}

func TestMain(m *testing.M) {
	code := m.Run()
	if fxVal != nil {
		_ = os.RemoveAll(filepath.Dir(fxVal.dir))
	}
	if benchDir != "" {
		_ = os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

// builder wraps the writer API, keeping the first error.
type builder struct {
	err  error
	open []h5.ID
}

func (b *builder) check(err error) {
	if err != nil && b.err == nil {
		b.err = err
	}
}

func (b *builder) id(id h5.ID, err error) h5.ID {
	b.check(err)
	if err == nil {
		b.open = append(b.open, id)
	}
	return id
}

// t registers a type id to close at the end.
func (b *builder) t(id h5.ID) h5.ID {
	b.open = append(b.open, id)
	return id
}

func (b *builder) closeAll() {
	for i := len(b.open) - 1; i >= 0; i-- {
		_ = h5.Close(b.open[i])
	}
	b.open = nil
}

func beType(b *builder, base h5.ID) h5.ID {
	b.check(h5.SetBigEndian(base, true))
	return b.t(base)
}

func buildFixtures(tmp string) (*fixtures, error) {
	root := filepath.Join(tmp, "root")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	fx := &fixtures{dir: root, main: filepath.Join(root, "all.h5"), other: filepath.Join(root, "other.h5")}
	if err := buildOther(fx.other); err != nil {
		return nil, err
	}
	if err := buildOther(filepath.Join(tmp, "outside.h5")); err != nil {
		return nil, err
	}
	if err := buildMain(fx.main); err != nil {
		return nil, err
	}
	return fx, nil
}

func buildOther(path string) error {
	b := &builder{}
	defer b.closeAll()
	f := b.id(h5write.CreateFile(path))
	if b.err != nil {
		return b.err
	}
	f64 := b.t(h5.NewFloat(8))
	d := b.id(h5write.CreateDataset(f, "/data", f64, []int64{6}, nil))
	vals := []float64{100, 101, 102, 103, 104, 105}
	b.check(h5write.WriteValues(d, f64, vals))
	return b.err
}

func buildMain(path string) error {
	b := &builder{}
	defer b.closeAll()
	f := b.id(h5write.CreateFile(path))
	if b.err != nil {
		return b.err
	}
	f64 := b.t(h5.NewFloat(8))
	f32 := b.t(h5.NewFloat(4))
	i8 := b.t(h5.NewInt(1, true))
	u8 := b.t(h5.NewInt(1, false))
	i16 := b.t(h5.NewInt(2, true))
	i32 := b.t(h5.NewInt(4, true))
	i64 := b.t(h5.NewInt(8, true))
	u64 := b.t(h5.NewInt(8, false))
	boolT := b.id(h5write.NewBoolType())
	vstr := b.t(h5.NewString(-1, true, h5.StrNullTerm))

	// --- /table: a group of equal-length columns, every primitive type.
	g := b.id(h5write.CreateGroup(f, "/table"))
	b.check(h5write.SetAttr(g, "description", "Run table"))
	b.check(h5write.SetAttr(g, "version", int64(3)))
	b.check(h5write.SetAttr(g, "scale", math.NaN()))
	n := tableRows
	xs, ys, flags, u8s, u64s, i16s, f32s, colors := make([]float64, n), make([]int32, n), make([]int8, n), make([]uint8, n), make([]uint64, n), make([]int16, n), make([]float32, n), make([]int16, n)
	names := make([]string, n)
	codes := make([]byte, n*4)
	for i := 0; i < n; i++ {
		xs[i], ys[i], u8s[i], u64s[i], i16s[i], f32s[i], colors[i] = fxX(i), fxY(i), uint8(i), fxU64(i), fxI16(i), fxF32(i), fxColorVal(i)
		if fxFlag(i) {
			flags[i] = 1
		}
		names[i] = fxName(i)
		copy(codes[i*4:], fxCode(i))
	}
	d := b.id(h5write.CreateDataset(g, "x", f64, []int64{int64(n)}, &h5write.DatasetOptions{Chunk: []int64{16}, Gzip: 4, Shuffle: true}))
	b.check(h5write.WriteValues(d, f64, xs))
	b.check(h5write.SetAttr(d, "units", "m"))
	b.check(h5write.SetAttr(d, "long_name", "position"))
	d = b.id(h5write.CreateDataset(g, "y", i32, []int64{int64(n)}, &h5write.DatasetOptions{MaxDims: []int64{h5.Unlimited}, Chunk: []int64{32}}))
	b.check(h5write.WriteValues(d, i32, ys))
	d = b.id(h5write.CreateDataset(g, "flag", boolT, []int64{int64(n)}, nil))
	b.check(h5write.WriteValues(d, boolT, flags))
	d = b.id(h5write.CreateDataset(g, "name", vstr, []int64{int64(n)}, &h5write.DatasetOptions{Chunk: []int64{32}, Gzip: 1}))
	b.check(h5write.WriteStrings(d, names, true))
	code := b.t(h5.NewString(4, false, h5.StrNullTerm))
	d = b.id(h5write.CreateDataset(g, "code", code, []int64{int64(n)}, nil))
	b.check(h5write.WriteValues(d, code, codes))
	d = b.id(h5write.CreateDataset(g, "u8", u8, []int64{int64(n)}, nil))
	b.check(h5write.WriteValues(d, u8, u8s))
	d = b.id(h5write.CreateDataset(g, "u64", u64, []int64{int64(n)}, nil))
	b.check(h5write.WriteValues(d, u64, u64s))
	d = b.id(h5write.CreateDataset(g, "i16be", beType(b, h5.NewInt(2, true)), []int64{int64(n)}, nil))
	b.check(h5write.WriteValues(d, i16, i16s))
	d = b.id(h5write.CreateDataset(g, "f32be", beType(b, h5.NewFloat(4)), []int64{int64(n)}, nil))
	b.check(h5write.WriteValues(d, f32, f32s))
	colorT := b.id(h5.NewEnum(i16, []h5.EnumMember{{Name: "RED", Value: 0}, {Name: "GREEN", Value: 1}, {Name: "BLUE", Value: 5}}))
	d = b.id(h5write.CreateDataset(g, "color", colorT, []int64{int64(n)}, nil))
	b.check(h5write.WriteValues(d, colorT, colors))
	b.check(h5write.CommitType(f, "/types/color_t", colorT))

	// --- /events: a 1-D chunked, compressed compound table.
	pos := b.id(h5.NewCompound(16, []h5.MemberSpec{{Name: "x", Offset: 0, Type: f64}, {Name: "y", Offset: 8, Type: f64}}))
	vec := b.id(h5.NewArray(f32, []int64{3}))
	tag := b.t(h5.NewString(8, false, h5.StrNullPad))
	blob := b.id(h5.NewOpaque(4, "raw bytes"))
	ev := b.id(h5.NewCompound(64, []h5.MemberSpec{
		{Name: "id", Offset: 0, Type: i64},
		{Name: "pos", Offset: 8, Type: pos},
		{Name: "vec", Offset: 24, Type: vec},
		{Name: "ok", Offset: 36, Type: boolT},
		{Name: "tag", Offset: 37, Type: tag},
		{Name: "label", Offset: 48, Type: vstr},
		{Name: "blob", Offset: 56, Type: blob},
	}))
	labels := make([]string, eventRows)
	for i := range labels {
		labels[i] = evLabel(i)
	}
	cs := h5write.NewCStrings(labels)
	defer cs.Free()
	rec := make([]byte, 64*eventRows)
	for i := 0; i < eventRows; i++ {
		r := rec[i*64:]
		binary.LittleEndian.PutUint64(r[0:], uint64(evID(i)))
		binary.LittleEndian.PutUint64(r[8:], math.Float64bits(evX(i)))
		binary.LittleEndian.PutUint64(r[16:], math.Float64bits(evY(i)))
		for k := 0; k < 3; k++ {
			binary.LittleEndian.PutUint32(r[24+4*k:], math.Float32bits(evVec(i, k)))
		}
		if evFlag(i) {
			r[36] = 1
		}
		copy(r[37:45], evTag(i))
		binary.LittleEndian.PutUint64(r[48:], uint64(cs.Ptr(i)))
		copy(r[56:60], []byte{1, 2, 3, byte(i)})
	}
	d = b.id(h5write.CreateDataset(f, "/events", ev, []int64{eventRows}, &h5write.DatasetOptions{Chunk: []int64{16}, Gzip: 6, Shuffle: true, Fletcher32: true}))
	b.check(h5write.Write(d, ev, unsafe.Pointer(&rec[0])))
	b.check(h5write.SetAttr(d, "title", "Detector events"))

	// --- 2-D tables.
	mat := make([]float64, 20*4)
	for i := 0; i < 20; i++ {
		for j := 0; j < 4; j++ {
			mat[i*4+j] = matrixVal(i, j)
		}
	}
	d = b.id(h5write.CreateDataset(f, "/matrix", f64, []int64{20, 4}, &h5write.DatasetOptions{Chunk: []int64{8, 2}, Gzip: 5}))
	b.check(h5write.WriteValues(d, f64, mat))
	b.check(h5write.SetAttr(d, "columns", []string{"alpha", "beta", "gamma", "delta"}))
	b.check(h5write.SetAttr(d, "units", "V"))
	be := make([]int32, 10*3)
	for i := range be {
		be[i] = int32(i*7 - 100)
	}
	d = b.id(h5write.CreateDataset(f, "/bigendian", beType(b, h5.NewInt(4, true)), []int64{10, 3}, nil))
	b.check(h5write.WriteValues(d, i32, be))
	b.check(h5write.SetAttr(d, "columns", []string{"only", "two"})) // wrong length: ignored
	b.id(h5write.CreateDataset(f, "/zero2d", f64, []int64{0, 3}, nil))
	b.id(h5write.CreateDataset(f, "/wide0", f64, []int64{3, 0}, nil))

	// --- Not tables.
	d = b.id(h5write.CreateDataset(f, "/scalar", f64, nil, &h5write.DatasetOptions{Scalar: true}))
	pi := []float64{math.Pi}
	b.check(h5write.WriteValues(d, f64, pi))
	b.id(h5write.CreateDataset(f, "/null", f64, nil, &h5write.DatasetOptions{Null: true}))
	cube := make([]int16, 2*3*4)
	for i := range cube {
		cube[i] = int16(i)
	}
	d = b.id(h5write.CreateDataset(f, "/cube", i16, []int64{2, 3, 4}, nil))
	b.check(h5write.WriteValues(d, i16, cube))

	// --- Lone 1-D datasets at the root (all of different lengths).
	d = b.id(h5write.CreateDataset(f, "/nan", f64, []int64{4}, &h5write.DatasetOptions{Fill: f64bytes(-1)}))
	b.check(h5write.WriteValues(d, f64, []float64{math.NaN(), math.Inf(1), math.Inf(-1), 1.5}))
	b.id(h5write.CreateDataset(f, "/empty", f64, []int64{0}, &h5write.DatasetOptions{MaxDims: []int64{h5.Unlimited}, Chunk: []int64{8}}))
	d = b.id(h5write.CreateDataset(f, "/bigint", i64, []int64{3}, nil))
	b.check(h5write.WriteValues(d, i64, []int64{1 << 60, -(1 << 60), 42}))
	b.check(h5write.WriteObjectRef(f, "/refs", "/table"))
	// Raw data in an external flat file (here beside the root; it could be
	// any file on the server, which is why Quarry refuses to read it).
	d = b.id(h5write.CreateDataset(f, "/extstore", f64, []int64{7}, &h5write.DatasetOptions{External: filepath.Join(filepath.Dir(filepath.Dir(path)), "raw.bin")}))
	b.check(h5write.WriteValues(d, f64, make([]float64, 7)))

	// --- /misc: a group table plus a column of another length.
	g = b.id(h5write.CreateGroup(f, "/misc"))
	d = b.id(h5write.CreateDataset(g, "a", i8, []int64{5}, nil))
	b.check(h5write.WriteValues(d, i8, []int8{1, 2, 3, 4, 5}))
	d = b.id(h5write.CreateDataset(g, "b", i8, []int64{5}, nil))
	b.check(h5write.WriteValues(d, i8, []int8{-1, -2, -3, -4, -5}))
	d = b.id(h5write.CreateDataset(g, "c", i8, []int64{3}, nil))
	b.check(h5write.WriteValues(d, i8, []int8{7, 8, 9}))
	b.check(h5write.CreateHardLink(g, "/misc/a", "/misc/a2")) // same object twice: listed once

	// --- /nc: NetCDF-4 style variables with a dimension placeholder.
	g = b.id(h5write.CreateGroup(f, "/nc"))
	d = b.id(h5write.CreateDataset(g, "time", f64, []int64{3}, nil))
	b.check(h5write.WriteValues(d, f64, []float64{0, 1, 2}))
	d = b.id(h5write.CreateDataset(g, "temp", f64, []int64{3}, nil))
	b.check(h5write.WriteValues(d, f64, []float64{280.5, 281, 282.25}))
	b.check(h5write.SetAttr(d, "units", "K"))
	d = b.id(h5write.CreateDataset(g, "x", f32, []int64{4}, nil))
	b.check(h5write.SetAttr(d, "NAME", "This is a netCDF dimension but not a netCDF variable.         4"))

	// --- Filters the library lacks.
	d = b.id(h5write.CreateDataset(f, "/filters/lzo", f64, []int64{10}, &h5write.DatasetOptions{Chunk: []int64{5}, Filters: []h5write.FilterSpec{{ID: h5.FilterLZO, Optional: true}}}))
	b.check(h5write.WriteValues(d, f64, make([]float64, 10)))
	b.check(h5write.RegisterXORFilter(h5.FilterBlosc))
	d = b.id(h5write.CreateDataset(f, "/filters/blosc", f64, []int64{12}, &h5write.DatasetOptions{Chunk: []int64{6}, Filters: []h5write.FilterSpec{{ID: h5.FilterBlosc}}}))
	b.check(h5write.WriteValues(d, f64, make([]float64, 12)))

	// --- Links.
	g = b.id(h5write.CreateGroup(f, "/links"))
	b.check(h5write.CreateSoftLink(g, "/table/x", "soft"))
	b.check(h5write.CreateSoftLink(g, "/misc", "softgroup"))
	b.check(h5write.CreateSoftLink(g, "../nope", "relsoft"))
	b.check(h5write.CreateSoftLink(g, "/nope", "dangling"))
	b.check(h5write.CreateSoftLink(g, "/links/loop2", "loop1"))
	b.check(h5write.CreateSoftLink(g, "/links/loop1", "loop2"))
	b.check(h5write.CreateExternalLink(g, "other.h5", "/data", "ext"))
	b.check(h5write.CreateExternalLink(g, "other.h5", "/", "extgroup"))
	b.check(h5write.CreateExternalLink(g, "other.h5", "/missing", "extbadobj"))
	b.check(h5write.CreateExternalLink(g, "missing.h5", "/x", "extmissing"))
	b.check(h5write.CreateExternalLink(g, "../outside.h5", "/data", "extoutside"))

	// --- Attributes of many types on the root.
	b.check(h5write.SetAttr(f, "title", "Quarry fixture"))
	b.check(h5write.SetAttr(f, "answer", 42))
	b.check(h5write.SetAttr(f, "weights", []float64{0.5, math.Inf(1)}))
	b.check(h5write.SetAttr(f, "ok", true))
	b.check(h5write.SetAttr(f, "tags", []string{"a", "β"}))
	for i := len(b.open) - 1; i >= 0; i-- {
		_ = h5.Close(b.open[i])
	}
	b.open = nil
	// Close the file before unregistering: chunks are written at close.
	b.check(h5write.UnregisterFilter(h5.FilterBlosc))
	return b.err
}

func f64bytes(v float64) []byte {
	out := make([]byte, 8)
	binary.LittleEndian.PutUint64(out, math.Float64bits(v))
	return out
}

func fileInfo(t testing.TB, root, abs string) catalog.FileInfo {
	t.Helper()
	st, err := os.Stat(abs)
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil {
		t.Fatal(err)
	}
	rel = filepath.ToSlash(rel)
	return catalog.FileInfo{AbsPath: abs, RelPath: rel, BaseID: rel[:len(rel)-len(filepath.Ext(rel))], Size: st.Size(), ModTime: st.ModTime().Truncate(time.Nanosecond)}
}

func ptr[T any](s []T) unsafe.Pointer { return unsafe.Pointer(&s[0]) }
