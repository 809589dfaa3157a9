package h5_test

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"

	. "github.com/quarrydb/quarry/internal/h5"
	. "github.com/quarrydb/quarry/internal/h5/h5write"
)

// recordFixture is a dataset of the direct-read differential test whose
// elements are not plain numbers: compounds (nested, with arrays, enums
// and fixed-length strings), fixed-length strings, enums and arrays.
type recordFixture struct {
	name   string
	typ    func(t *testing.T) ID // the file type (closed by the test)
	dims   []int64
	chunk  []int64
	opts   DatasetOptions
	fill   bool      // a user fill value of random bytes
	blocks [][]int64 // start,count pairs (flattened) written; nil = everything
	// reason is a substring of the ineligibility reason ("" = eligible).
	reason string
}

// compoundType builds {id i64, val f32, tag S5 (pad), kind enum i16,
// vec [2]i32, pos {x u8, y f64}}, packed unless padded, with every member
// big-endian when be, and with an extra vlen string member when vlen.
func compoundType(t *testing.T, padded, be, vlen bool, pad StrPad) ID {
	t.Helper()
	num := func(id ID) ID {
		if be {
			must(t, SetBigEndian(id, true))
		}
		return id
	}
	i16 := NewInt(2, true)
	defer Close(i16)
	kind := idOK(t)(NewEnum(num(NewInt(2, true)), []EnumMember{{"A", 0}, {"B", 3}, {"C", -7}}))
	defer Close(kind)
	i32 := num(NewInt(4, true))
	defer Close(i32)
	vec := idOK(t)(NewArray(i32, []int64{2}))
	defer Close(vec)
	u8, f64 := NewInt(1, false), num(NewFloat(8))
	defer Close(u8)
	defer Close(f64)
	gap := 0
	if padded {
		gap = 3
	}
	pos := idOK(t)(NewCompound(9+gap, []MemberSpec{{"x", 0, u8}, {"y", 1 + gap, f64}}))
	defer Close(pos)
	i64, f32 := num(NewInt(8, true)), num(NewFloat(4))
	defer Close(i64)
	defer Close(f32)
	tag := NewString(5, false, pad)
	defer Close(tag)
	members := []MemberSpec{{"id", 0, i64}, {"val", 8, f32}, {"tag", 12, tag}, {"kind", 17, kind}, {"vec", 19, vec}, {"pos", 27, pos}}
	size := 36 + gap
	if padded {
		for i := range members {
			members[i].Offset += 2 * i
		}
		size += 2 * len(members)
	}
	if vlen {
		vs := NewString(-1, true, StrNullTerm)
		defer Close(vs)
		members = append(members, MemberSpec{"note", size, vs})
		size += int(unsafe.Sizeof(uintptr(0)))
	}
	return idOK(t)(NewCompound(size, members))
}

func recordFixtures() []*recordFixture {
	shufGz := DatasetOptions{Gzip: 4, Shuffle: true}
	plain := func(padded, be, vlen bool, pad StrPad) func(t *testing.T) ID {
		return func(t *testing.T) ID { return compoundType(t, padded, be, vlen, pad) }
	}
	return []*recordFixture{
		{name: "compound_shuffle_deflate_1d", typ: plain(false, false, false, StrNullPad), dims: []int64{1000}, chunk: []int64{96}, opts: shufGz},
		{name: "compound_fletcher_2d_fill", typ: plain(false, false, false, StrNullTerm), dims: []int64{30, 20}, chunk: []int64{7, 6},
			opts: DatasetOptions{Gzip: 6, Shuffle: true, Fletcher32: true}, fill: true, blocks: [][]int64{{0, 0, 7, 6}, {10, 3, 9, 14}}},
		{name: "compound_deflate_unallocated_default_fill", typ: plain(false, false, false, StrSpacePad), dims: []int64{300}, chunk: []int64{40},
			opts: DatasetOptions{Gzip: 1}, blocks: [][]int64{{50, 70}, {299, 1}}},
		{name: "fixed_string", typ: func(*testing.T) ID { return NewString(17, false, StrNullPad) }, dims: []int64{700}, chunk: []int64{64}, opts: shufGz},
		{name: "enum", typ: func(t *testing.T) ID {
			base := NewInt(1, false)
			defer Close(base)
			return idOK(t)(NewEnum(base, []EnumMember{{"FALSE", 0}, {"TRUE", 1}}))
		}, dims: []int64{500}, chunk: []int64{33}, opts: DatasetOptions{Gzip: 2}},
		{name: "array", typ: func(t *testing.T) ID {
			base := NewFloat(4)
			defer Close(base)
			return idOK(t)(NewArray(base, []int64{2, 3}))
		}, dims: []int64{40, 9}, chunk: []int64{16, 4}, opts: shufGz},
		{name: "compound_padded", typ: plain(true, false, false, StrNullPad), dims: []int64{100}, chunk: []int64{16}, opts: shufGz,
			reason: "file type differs"},
		{name: "compound_big_endian", typ: plain(false, true, false, StrNullPad), dims: []int64{100}, chunk: []int64{16}, opts: shufGz,
			reason: "file type differs"},
		{name: "compound_vlen_member", typ: plain(false, false, true, StrNullPad), dims: []int64{100}, chunk: []int64{16}, opts: shufGz,
			reason: "not a type of numbers"},
		{name: "vlen_string", typ: func(*testing.T) ID { return NewString(-1, true, StrNullTerm) }, dims: []int64{100}, chunk: []int64{16}, opts: DatasetOptions{Gzip: 4},
			reason: "not a type of numbers"},
	}
}

// create writes the fixture: elements of random bytes (half of them
// repeating, so deflate and shuffle have work), vlen members as NULL.
func (f *recordFixture) create(t *testing.T, file ID, rng *rand.Rand) {
	t.Helper()
	ft := f.typ(t)
	defer Close(ft)
	desc, err := DescribeType(ft)
	must(t, err)
	size := desc.Size
	o := f.opts
	o.Chunk = f.chunk
	if f.fill && !desc.HasVarData() {
		o.Fill = randomBytes(rng, size)
	}
	d := idOK(t)(CreateDataset(file, f.name, ft, f.dims, &o))
	defer Close(d)
	n := int64(1)
	for _, x := range f.dims {
		n *= x
	}
	full := make([]byte, n*int64(size))
	for i := int64(0); i < n; i++ {
		e := full[i*int64(size) : (i+1)*int64(size)]
		if i%2 == 0 && i > 0 {
			copy(e, full[(i-2)*int64(size):])
		} else {
			copy(e, randomBytes(rng, size))
		}
	}
	if desc.HasVarData() {
		clear(full) // NULL pointers: empty strings
	}
	if f.blocks == nil {
		must(t, Write(d, ft, unsafe.Pointer(&full[0])))
		return
	}
	rank := len(f.dims)
	for _, b := range f.blocks {
		start, count := b[:rank], b[rank:]
		sel := Hyperslab{Start: start, Count: count}
		part := make([]byte, sel.NumElements()*int64(size))
		for k := range part {
			part[k] = byte(k*7 + 1)
		}
		must(t, WriteSlab(d, ft, start, count, unsafe.Pointer(&part[0])))
	}
}

func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.IntN(256))
	}
	return b
}

func TestChunkReaderRecordsMatchH5Dread(t *testing.T) {
	inflaters(t, testChunkReaderRecordsMatchH5Dread)
}

func testChunkReaderRecordsMatchH5Dread(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	fixtures := recordFixtures()
	file := writeFixtures(t, func(file ID) {
		for _, f := range fixtures {
			f.create(t, file, rng)
		}
	})
	for _, f := range fixtures {
		t.Run(f.name, func(t *testing.T) {
			d := idOK(t)(OpenDataset(file, f.name, 0))
			defer Close(d)
			typ, err := DatasetType(d)
			must(t, err)
			mem, size, err := MemType(typ)
			must(t, err)
			defer Close(mem)
			cr, reason, err := NewChunkReader(d, mem)
			must(t, err)
			if f.reason != "" {
				if cr != nil || !strings.Contains(reason, f.reason) {
					t.Fatalf("want ineligible (%q), got reader=%v reason %q", f.reason, cr != nil, reason)
				}
				return
			}
			if cr == nil {
				t.Fatalf("not eligible: %s", reason)
			}
			if cr.ElemSize() != size {
				t.Fatalf("ElemSize %d, want %d", cr.ElemSize(), size)
			}
			for _, sel := range selections(f.dims, rng) {
				compareRead(t, d, mem, cr, sel, size, true)
			}
		})
	}
}
