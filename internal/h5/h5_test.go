package h5_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	. "github.com/quarrydb/quarry/internal/h5"
	. "github.com/quarrydb/quarry/internal/h5/h5write"
)

// idOK returns a checker for (ID, error) results that fails t on error.
func idOK(t testing.TB) func(ID, error) ID {
	return func(id ID, err error) ID {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestThreadSafeBuild(t *testing.T) {
	// Debian's libhdf5 is thread-safe; the package works either way, but
	// the concurrency design assumes this on the supported platform.
	if !ThreadSafe() {
		t.Log("libhdf5 is not thread-safe: every call is serialized by a package mutex")
	}
}

// writeTypes creates one dataset per type and returns the expected String().
func writeTypes(t *testing.T, f ID) map[string]string {
	mustID := idOK(t)
	t.Helper()
	f64 := NewFloat(8)
	defer Close(f64)
	i16 := NewInt(2, true)
	defer Close(i16)
	be := NewInt(4, false)
	defer Close(be)
	must(t, SetBigEndian(be, true))
	boolT := mustID(NewBoolType())
	defer Close(boolT)
	enumT := mustID(NewEnum(i16, []EnumMember{{"A", -1}, {"B", 7}}))
	defer Close(enumT)
	fs := NewString(8, false, StrNullPad)
	defer Close(fs)
	vs := NewString(-1, true, StrNullTerm)
	defer Close(vs)
	arr := mustID(NewArray(f64, []int64{2, 3}))
	defer Close(arr)
	cmp := mustID(NewCompound(24, []MemberSpec{{"a", 0, i16}, {"b", 8, f64}, {"c", 16, vs}}))
	defer Close(cmp)
	op := mustID(NewOpaque(5, "blob"))
	defer Close(op)
	want := map[string]string{
		"f64": "float64", "i16": "int16", "be": "uint32", "bool": "bool",
		"enum": "enum(int16){A=-1, B=7}", "fs": "|S8", "vs": "vlen utf-8 string",
		"arr": "float64[2,3]", "cmp": "compound{a: int16, b: float64, c: vlen utf-8 string}",
		"op": `opaque(5 bytes, tag "blob")`,
	}
	for name, typ := range map[string]ID{"f64": f64, "i16": i16, "be": be, "bool": boolT, "enum": enumT, "fs": fs, "vs": vs, "arr": arr, "cmp": cmp, "op": op} {
		d := mustID(CreateDataset(f, name, typ, []int64{2}, nil))
		must(t, Close(d))
	}
	must(t, WriteObjectRef(f, "ref", "/f64"))
	want["ref"] = "object reference"
	return want
}

func TestDescribeTypes(t *testing.T) {
	mustID := idOK(t)
	p := filepath.Join(t.TempDir(), "types.h5")
	f := mustID(CreateFile(p))
	want := writeTypes(t, f)
	must(t, Close(f))

	f = mustID(OpenFile(p))
	defer Close(f)
	for name, s := range want {
		d := mustID(OpenObject(f, "/"+name))
		typ, err := DatasetType(d)
		Close(d)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := typ.String(); got != s {
			t.Errorf("%s: String() = %q, want %q", name, got, s)
		}
		switch name {
		case "be":
			if typ.Order != OrderBE || typ.Signed || typ.Size != 4 {
				t.Errorf("be: %+v", typ)
			}
		case "cmp":
			if len(typ.Members) != 3 || typ.Members[1].Offset != 8 || typ.Members[2].Type.CharSet != CharSetUTF8 {
				t.Errorf("cmp: %+v", typ)
			}
			if !typ.HasVarData() {
				t.Error("cmp: HasVarData false")
			}
		case "arr":
			if !reflect.DeepEqual(typ.Dims, []int64{2, 3}) || typ.NumElements() != 6 {
				t.Errorf("arr: %+v", typ)
			}
		case "bool":
			if !typ.IsBool() {
				t.Error("bool: IsBool false")
			}
		case "fs":
			if typ.Pad != StrNullPad || typ.VarString {
				t.Errorf("fs: %+v", typ)
			}
		}
		if _, _, err := MemType(typ); (err != nil) != (name == "zzz") {
			if name != "ref" && name != "op" || err != nil {
				t.Errorf("%s: MemType: %v", name, err)
			}
		}
	}
}

func TestAttributes(t *testing.T) {
	mustID := idOK(t)
	p := filepath.Join(t.TempDir(), "attrs.h5")
	f := mustID(CreateFile(p))
	must(t, SetAttr(f, "s", "héllo"))
	must(t, SetAttr(f, "ss", []string{"a", "b"}))
	must(t, SetAttr(f, "i", 7))
	must(t, SetAttr(f, "is", []int64{1, -2}))
	must(t, SetAttr(f, "f", 1.5))
	must(t, SetAttr(f, "nan", math.NaN()))
	must(t, SetAttr(f, "fs", []float64{math.Inf(1), math.Inf(-1)}))
	must(t, SetAttr(f, "b", true))
	must(t, SetAttr(f, "i32", []int32{3}))
	// A 2-D attribute and a fixed-length string attribute.
	f64 := NewFloat(8)
	a := mustID(CreateAttribute(f, "m", f64, []int64{2, 2}))
	m := []float64{1, 2, 3, 4}
	must(t, WriteAttribute(a, f64, unsafe.Pointer(&m[0])))
	Close(a)
	fs := NewString(6, false, StrSpacePad)
	a = mustID(CreateAttribute(f, "fixed", fs, nil))
	must(t, WriteAttribute(a, fs, unsafe.Pointer(&[]byte("ab    ")[0])))
	Close(a)
	op := mustID(NewOpaque(2, ""))
	a = mustID(CreateAttribute(f, "opaque", op, nil))
	must(t, WriteAttribute(a, op, unsafe.Pointer(&[]byte{1, 2}[0])))
	Close(a)
	big := mustID(CreateAttribute(f, "big", f64, []int64{MaxAttrElements + 1}))
	Close(big)
	Close(op)
	Close(fs)
	Close(f64)
	must(t, Close(f))

	f = mustID(OpenFile(p))
	defer Close(f)
	got, err := ReadAttributes(f, 100)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"s": "héllo", "ss": []any{"a", "b"}, "i": int64(7), "is": []any{int64(1), int64(-2)},
		"f": 1.5, "nan": "NaN", "fs": []any{"Infinity", "-Infinity"}, "b": true, "i32": []any{int64(3)},
		"m": []any{[]any{1.0, 2.0}, []any{3.0, 4.0}}, "fixed": "ab",
	}
	for k, v := range want {
		if !reflect.DeepEqual(got[k], v) {
			t.Errorf("attribute %s = %#v, want %#v", k, got[k], v)
		}
	}
	if want := (Bytes{Base64: "AQI=", SizeBytes: 2}); !reflect.DeepEqual(got["opaque"], want) {
		t.Errorf("opaque attribute = %#v, want %#v", got["opaque"], want)
	}
	if tr, ok := got["big"].(Truncated); !ok || !tr.Truncated || tr.ElementCount != MaxAttrElements+1 || len(tr.Values) != MaxAttrElements {
		t.Errorf("big attribute = %#v", got["big"])
	}
	if _, err := json.Marshal(got); err != nil {
		t.Errorf("attributes are not JSON-safe: %v", err)
	}
	names, total, err := AttributeNames(f, 3)
	if err != nil || len(names) != 3 || total != int64(len(got)) {
		t.Errorf("AttributeNames(max 3) = %v, %d, %v", names, total, err)
	}
}

func TestErrorsCarryLibraryMessages(t *testing.T) {
	mustID := idOK(t)
	_, err := OpenFile(filepath.Join(t.TempDir(), "missing.h5"))
	if err == nil || !strings.Contains(err.Error(), "H5Fopen") || !strings.Contains(err.Error(), "No such file") {
		t.Fatalf("OpenFile(missing) error = %v", err)
	}
	p := filepath.Join(t.TempDir(), "x.h5")
	f := mustID(CreateFile(p))
	defer Close(f)
	_, err = OpenObject(f, "/nope")
	if err == nil || !strings.Contains(err.Error(), "doesn't exist") {
		t.Fatalf("OpenObject(missing) error = %v", err)
	}
	if ok, err := IsHDF5(p); !ok || err != nil {
		t.Fatalf("IsHDF5(new file) = %v, %v", ok, err)
	}
	txt := filepath.Join(t.TempDir(), "t.h5")
	must(t, os.WriteFile(txt, []byte("not hdf5"), 0o644))
	if ok, _ := IsHDF5(txt); ok {
		t.Fatal("IsHDF5(text) = true")
	}
}

func TestReadHyperslabAndStrings(t *testing.T) {
	mustID := idOK(t)
	p := filepath.Join(t.TempDir(), "r.h5")
	f := mustID(CreateFile(p))
	i32 := NewInt(4, true)
	defer Close(i32)
	d := mustID(CreateDataset(f, "m", i32, []int64{4, 5}, &DatasetOptions{Chunk: []int64{2, 2}, Gzip: 1}))
	vals := make([]int32, 20)
	for i := range vals {
		vals[i] = int32(i)
	}
	must(t, WriteValues(d, i32, vals))
	Close(d)
	vs := NewString(-1, true, StrNullTerm)
	defer Close(vs)
	d = mustID(CreateDataset(f, "s", vs, []int64{3}, nil))
	must(t, WriteStrings(d, []string{"α", "", "xyz"}, true))
	Close(d)
	must(t, Close(f))

	f = mustID(OpenFile(p))
	defer Close(f)
	d = mustID(OpenDataset(f, "/m", 4<<20))
	out := make([]int32, 4)
	must(t, Read(d, i32, Hyperslab{Start: []int64{1, 1}, Stride: []int64{2, 3}, Count: []int64{2, 2}}, unsafe.Pointer(&out[0])))
	if want := []int32{6, 9, 16, 19}; !reflect.DeepEqual(out, want) {
		t.Fatalf("hyperslab read = %v, want %v", out, want)
	}
	info, err := GetDatasetInfo(d)
	if err != nil || info.Layout != LayoutChunked || !reflect.DeepEqual(info.Chunk, []int64{2, 2}) || len(info.Filters) != 1 || info.Filters[0].Name != "deflate" || !info.Filters[0].Available {
		t.Fatalf("dataset info = %+v, %v", info, err)
	}
	if err := Read(d, i32, Hyperslab{Start: []int64{0}, Count: []int64{100}}, unsafe.Pointer(&out[0])); err == nil {
		t.Fatal("rank-mismatched read succeeded")
	}
	Close(d)
	d = mustID(OpenObject(f, "/s"))
	defer Close(d)
	v, err := ReadVarStrings(d, false, vs, Hyperslab{Start: []int64{0}, Count: []int64{3}}, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Free()
	if got := v.Strings(); !reflect.DeepEqual(got, []string{"α", "", "xyz"}) || v.TotalBytes() != 5 {
		t.Fatalf("strings = %q (%d bytes)", got, v.TotalBytes())
	}
	offs := make([]int32, 4)
	data := make([]byte, 5)
	v.Fill(offs, data)
	if !reflect.DeepEqual(offs, []int32{0, 2, 2, 5}) || string(data) != "αxyz" {
		t.Fatalf("Fill = %v %q", offs, data)
	}
	v.Free()
}

func TestPackFixedStrings(t *testing.T) {
	tests := []struct {
		pad  StrPad
		in   string
		want []string
	}{
		{StrNullTerm, "ab\x00x" + "abcd" + "\x00\x00\x00\x00", []string{"ab", "abcd", ""}},
		{StrNullPad, "ab\x00\x00" + "a\x00b\x00" + "    ", []string{"ab", "a\x00b", "    "}},
		{StrSpacePad, "ab  " + "abcd" + "  \x00\x00", []string{"ab", "abcd", ""}},
	}
	for _, tc := range tests {
		data := []byte(tc.in)
		offs := make([]int32, len(tc.want)+1)
		n := PackFixedStrings(data, len(tc.want), 4, tc.pad, offs)
		var got []string
		for i := range tc.want {
			got = append(got, string(data[offs[i]:offs[i+1]]))
		}
		if !reflect.DeepEqual(got, tc.want) || int(offs[len(tc.want)]) != n {
			t.Errorf("pad %d: got %q (n=%d), want %q", tc.pad, got, n, tc.want)
		}
	}
}

func TestLinksAndMembers(t *testing.T) {
	mustID := idOK(t)
	dir := t.TempDir()
	p := filepath.Join(dir, "l.h5")
	f := mustID(CreateFile(p))
	g := mustID(CreateGroup(f, "/g/sub"))
	Close(g)
	must(t, CreateSoftLink(f, "/g/sub", "/soft"))
	must(t, CreateExternalLink(f, "other.h5", "/x", "/ext"))
	must(t, Close(f))
	f = mustID(OpenFile(p))
	defer Close(f)
	l, ok, err := GetLink(f, "/soft")
	if err != nil || !ok || l.Type != LinkSoft || l.Target != "/g/sub" {
		t.Fatalf("soft link = %+v %v %v", l, ok, err)
	}
	l, ok, err = GetLink(f, "/ext")
	if err != nil || !ok || l.Type != LinkExternal || l.Target != "/x" || l.TargetFile != "other.h5" {
		t.Fatalf("external link = %+v %v %v", l, ok, err)
	}
	if _, ok, err := GetLink(f, "/missing"); ok || err != nil {
		t.Fatalf("missing link: %v %v", ok, err)
	}
	// External links are never traversed by the shim.
	if _, err := GetObjInfo(f, "/ext"); err == nil {
		t.Fatal("GetObjInfo traversed an external link")
	}
	if oi, err := GetObjInfo(f, "/soft"); err != nil || oi.Type != ObjGroup {
		t.Fatalf("soft link target info = %+v, %v", oi, err)
	}
	ms, total, err := ListMembers(f, 10)
	if err != nil || total != 3 || len(ms) != 3 {
		t.Fatalf("members = %+v %d %v", ms, total, err)
	}
	want := []Member{{Name: "ext", Link: LinkExternal, Obj: ObjUnknown}, {Name: "g", Link: LinkHard, Obj: ObjGroup}, {Name: "soft", Link: LinkSoft, Obj: ObjUnknown}}
	for i := range want {
		ms[i].Addr = 0
	}
	if !reflect.DeepEqual(ms, want) {
		t.Fatalf("members = %+v, want %+v", ms, want)
	}
	if ms, total, _ := ListMembers(f, 1); len(ms) != 1 || total != 3 {
		t.Fatalf("capped members = %d of %d", len(ms), total)
	}
}

// acquire opens p (as the catalog's confined open would) and acquires it.
func acquire(c *FileCache, p string) (*File, error) {
	fh, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	return c.Acquire(p, fh)
}

// TestOpenFDReadsTheCheckedFile: OpenFD opens the file the descriptor
// refers to, even when its path has been swapped for another file (a
// symlink to it) since the descriptor was opened; the cache reopens a
// path that now holds another file even with the same size and mtime.
func TestOpenFDReadsTheCheckedFile(t *testing.T) {
	mustID := idOK(t)
	dir := t.TempDir()
	mk := func(name, group string) string {
		p := filepath.Join(dir, name)
		f := mustID(CreateFile(p))
		Close(mustID(CreateGroup(f, group)))
		must(t, Close(f))
		return p
	}
	p := mk("data.h5", "/inside")
	other := mk("other.h5", "/outside")
	fh, err := os.Open(p)
	must(t, err)
	defer fh.Close()
	// The checked file moved away, a symlink to another file in its place.
	must(t, os.Rename(p, p+".moved"))
	must(t, os.Symlink(other, p))
	if ok, err := IsHDF5FD(fh); !ok || err != nil {
		t.Fatalf("IsHDF5FD = %v, %v", ok, err)
	}
	id := mustID(OpenFD(fh))
	if _, err := GetObjInfo(id, "/inside"); err != nil {
		t.Fatalf("OpenFD did not open the descriptor's file: %v", err)
	}
	if _, err := GetObjInfo(id, "/outside"); err == nil {
		t.Fatal("OpenFD followed the swapped path")
	}
	must(t, Close(id))
	// The checked file deleted (only the descriptor keeps it): libhdf5
	// cannot name it and refuses; it never opens the symlink's target.
	must(t, os.Remove(p+".moved"))
	if id, err := OpenFD(fh); err == nil {
		_, e := GetObjInfo(id, "/outside")
		Close(id)
		if e == nil {
			t.Fatal("OpenFD of a deleted file read the swapped-in file")
		}
	}
	must(t, os.Remove(p))

	// Same size and mtime, another inode: not the cached version.
	a := mk("data.h5", "/g")
	c := NewFileCache(4)
	defer c.Close()
	f1, err := acquire(c, a)
	must(t, err)
	f1.Release()
	st, err := os.Stat(a)
	must(t, err)
	b := mk("b.h5", "/g")
	must(t, os.Chtimes(b, st.ModTime(), st.ModTime()))
	if sb, _ := os.Stat(b); sb.Size() != st.Size() {
		t.Skipf("files differ in size (%d, %d)", sb.Size(), st.Size())
	}
	must(t, os.Rename(b, a))
	opens := c.Opens()
	f2, err := acquire(c, a)
	must(t, err)
	f2.Release()
	if c.Opens() != opens+1 {
		t.Fatal("a replaced file of equal size and mtime was served from the cache")
	}
}

func TestFileCache(t *testing.T) {
	mustID := idOK(t)
	dir := t.TempDir()
	var paths []string
	for i := 0; i < 3; i++ {
		p := filepath.Join(dir, string(rune('a'+i))+".h5")
		f := mustID(CreateFile(p))
		must(t, Close(f))
		paths = append(paths, p)
	}
	base := OpenObjectCount()
	c := NewFileCache(2)
	a1, err := acquire(c, paths[0])
	if err != nil {
		t.Fatal(err)
	}
	a2, _ := acquire(c, paths[0])
	if a1.ID() != a2.ID() || c.Opens() != 1 {
		t.Fatalf("second acquire reopened the file (%d opens)", c.Opens())
	}
	b, _ := acquire(c, paths[1])
	cc, _ := acquire(c, paths[2]) // evicts a (still referenced: stays open)
	if c.Len() != 2 {
		t.Fatalf("cache holds %d files, want 2", c.Len())
	}
	if !Valid(a1.ID()) {
		t.Fatal("evicted file closed while in use")
	}
	aid := a1.ID()
	a1.Release()
	a1.Release() // idempotent
	if !Valid(aid) {
		t.Fatal("file closed while one reference remains")
	}
	a2.Release()
	if Valid(aid) {
		t.Fatal("evicted file not closed after the last release")
	}
	// A changed file is reopened.
	b.Release()
	time.Sleep(10 * time.Millisecond)
	// (Rewritten under a new name and renamed over: this process still has
	// the old file open, and HDF5 refuses to truncate a file it has open.)
	tmp := paths[1] + ".tmp"
	f := mustID(CreateFile(tmp))
	g := mustID(CreateGroup(f, "/new"))
	Close(g)
	must(t, Close(f))
	must(t, os.Rename(tmp, paths[1]))
	opens := c.Opens()
	b2, err := acquire(c, paths[1])
	if err != nil {
		t.Fatal(err)
	}
	if c.Opens() != opens+1 {
		t.Fatal("changed file served from the cache")
	}
	if oi, err := GetObjInfo(b2.ID(), "/new"); err != nil || oi.Type != ObjGroup {
		t.Fatalf("reopened file lacks the new group: %v", err)
	}
	b2.Release()
	cc.Release()
	if _, err := acquire(c, filepath.Join(dir, "missing.h5")); err == nil {
		t.Fatal("acquired a missing file")
	}
	must(t, c.Close())
	if _, err := acquire(c, paths[0]); err != ErrCacheClosed {
		t.Fatalf("Acquire after Close = %v", err)
	}
	if n := OpenObjectCount(); n != base {
		t.Fatalf("%d HDF5 objects open after Close, want %d", n, base)
	}
}
