//go:build cgo && !nohdf5

package hdf5

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/quarrydb/quarry/internal/h5"
	"github.com/quarrydb/quarry/internal/h5/h5write"
	"github.com/quarrydb/quarry/internal/qerr"
)

func TestBrowse(t *testing.T) {
	fx := sharedFixtures(t)
	f := NewFormat(WithRoot(fx.dir))
	defer f.Close()
	lvl := func(n int) *int { return &n }
	tests := []struct {
		path  string
		kind  string
		check func(t *testing.T, o *Object)
	}{
		{"/", KindGroup, func(t *testing.T, o *Object) {
			if o.MemberCount != 19 || len(o.Members) != 19 || o.MembersTruncated {
				t.Errorf("members %d of %d", len(o.Members), o.MemberCount)
			}
			if o.Attributes["title"] != "Quarry fixture" || o.Attributes["ok"] != true {
				t.Errorf("attributes = %v", o.Attributes)
			}
			byName := map[string]Member{}
			for _, m := range o.Members {
				byName[m.Name] = m
			}
			if m := byName["cube"]; m.Kind != KindDataset || !reflect.DeepEqual(m.Shape, []int64{2, 3, 4}) || m.DType != "int16" {
				t.Errorf("cube member = %+v", m)
			}
			if m := byName["scalar"]; !m.Scalar || m.Shape != nil {
				t.Errorf("scalar member = %+v", m)
			}
			if m := byName["links"]; m.Kind != KindGroup {
				t.Errorf("links member = %+v", m)
			}
		}},
		{"/links", KindGroup, func(t *testing.T, o *Object) {
			for _, m := range o.Members {
				switch m.Name {
				case "soft":
					if m.Kind != KindSoftLink || m.Target != "/table/x" {
						t.Errorf("soft member = %+v", m)
					}
				case "ext":
					if m.Kind != KindExternalLink || m.Target != "/data" || m.TargetFile != "other.h5" {
						t.Errorf("ext member = %+v", m)
					}
				}
			}
		}},
		{"/table/y", KindDataset, func(t *testing.T, o *Object) {
			if !reflect.DeepEqual(o.Shape, []int64{100}) || !reflect.DeepEqual(o.MaxShape, []int64{-1}) || !reflect.DeepEqual(o.Chunks, []int64{32}) {
				t.Errorf("y = shape %v maxshape %v chunks %v", o.Shape, o.MaxShape, o.Chunks)
			}
			if o.DType != "int32" || o.SizeBytes != 400 || o.Layout != "chunked" {
				t.Errorf("y = %+v", o.DatasetInfo)
			}
		}},
		{"/table/x", KindDataset, func(t *testing.T, o *Object) {
			want := []FilterInfo{{ID: 2, Name: "shuffle", Optional: true, Available: true}, {ID: 1, Name: "deflate", Level: lvl(4), Optional: true, Available: true}}
			if !reflect.DeepEqual(o.Filters, want) {
				b, _ := json.Marshal(o.Filters)
				t.Errorf("filters = %s", b)
			}
			if o.Attributes["units"] != "m" {
				t.Errorf("attributes = %v", o.Attributes)
			}
		}},
		{"/table/i16be", KindDataset, func(t *testing.T, o *Object) {
			if o.DTypeDetail.ByteOrder != "big" || o.DType != "int16" {
				t.Errorf("dtype = %s %+v", o.DType, o.DTypeDetail)
			}
		}},
		{"/table/code", KindDataset, func(t *testing.T, o *Object) {
			if o.DType != "|S4" || o.DTypeDetail.Padding != "nullterm" || o.DTypeDetail.Charset != "ascii" {
				t.Errorf("dtype = %s %+v", o.DType, o.DTypeDetail)
			}
		}},
		{"/events", KindDataset, func(t *testing.T, o *Object) {
			d := o.DTypeDetail
			if d.Class != "compound" || len(d.Members) != 7 || d.Members[1].Name != "pos" || d.Members[1].Offset != 8 || d.Members[1].Type.Class != "compound" {
				t.Errorf("dtype detail = %+v", d)
			}
			if d.Members[2].Type.Class != "array" || !reflect.DeepEqual(d.Members[2].Type.Dims, []int64{3}) || d.Members[2].Type.Base.Class != "float" {
				t.Errorf("vec detail = %+v", d.Members[2].Type)
			}
			if !strings.HasPrefix(o.DType, "compound{id: int64, pos: compound{x: float64") {
				t.Errorf("dtype = %s", o.DType)
			}
			if len(o.Filters) != 3 || o.Filters[2].Name != "fletcher32" {
				t.Errorf("filters = %+v", o.Filters)
			}
		}},
		{"/nan", KindDataset, func(t *testing.T, o *Object) {
			if o.FillValue != -1.0 {
				t.Errorf("fill value = %v", o.FillValue)
			}
		}},
		{"/scalar", KindDataset, func(t *testing.T, o *Object) {
			if o.Shape == nil || len(o.Shape) != 0 || o.Chunks != nil || o.Layout != "contiguous" {
				t.Errorf("scalar = %+v", o.DatasetInfo)
			}
		}},
		{"/null", KindDataset, func(t *testing.T, o *Object) {
			if o.Shape != nil || !strings.Contains(o.Unreadable, "null dataspace") {
				t.Errorf("null = %+v", o.DatasetInfo)
			}
		}},
		{"/refs", KindDataset, func(t *testing.T, o *Object) {
			if o.DType != "object reference" || !strings.Contains(o.Unreadable, "unsupported") {
				t.Errorf("refs = %s %+v", o.DType, o.DatasetInfo)
			}
		}},
		{"/filters/lzo", KindDataset, func(t *testing.T, o *Object) {
			if len(o.Filters) != 1 || o.Filters[0].ID != 305 || o.Filters[0].Name != "lzo" || o.Filters[0].Available {
				t.Errorf("filters = %+v", o.Filters)
			}
			if !strings.Contains(o.Unreadable, "lzo") {
				t.Errorf("unreadable = %q", o.Unreadable)
			}
		}},
		{"/extstore", KindDataset, func(t *testing.T, o *Object) {
			if !strings.Contains(o.Unreadable, "external file") {
				t.Errorf("unreadable = %q", o.Unreadable)
			}
		}},
		{"/filters/blosc", KindDataset, func(t *testing.T, o *Object) {
			if o.Filters[0].ID != 32001 || o.Filters[0].Name != "blosc" || o.Filters[0].Optional {
				t.Errorf("filters = %+v", o.Filters)
			}
		}},
		{"/types/color_t", KindNamedDatatype, func(t *testing.T, o *Object) {
			if o.DType != "enum(int16){RED=0, GREEN=1, BLUE=5}" || len(o.DTypeDetail.EnumMembers) != 3 {
				t.Errorf("named type = %s %+v", o.DType, o.DTypeDetail)
			}
		}},
		{"/links/soft", KindSoftLink, func(t *testing.T, o *Object) {
			if o.Target != "/table/x" || o.Dangling {
				t.Errorf("link = %+v", o.LinkInfo)
			}
		}},
		{"/links/dangling", KindSoftLink, func(t *testing.T, o *Object) {
			if o.Target != "/nope" || !o.Dangling {
				t.Errorf("link = %+v", o.LinkInfo)
			}
		}},
		{"/links/relsoft", KindSoftLink, func(t *testing.T, o *Object) {
			if !o.Dangling {
				t.Errorf("link = %+v", o.LinkInfo)
			}
		}},
		{"/links/ext", KindExternalLink, func(t *testing.T, o *Object) {
			if o.Target != "/data" || o.TargetFile != "other.h5" || o.Dangling || o.OutsideRoot {
				t.Errorf("link = %+v", o.LinkInfo)
			}
		}},
		{"/links/extmissing", KindExternalLink, func(t *testing.T, o *Object) {
			if !o.Dangling {
				t.Errorf("link = %+v", o.LinkInfo)
			}
		}},
		{"/links/extbadobj", KindExternalLink, func(t *testing.T, o *Object) {
			if !o.Dangling {
				t.Errorf("link = %+v", o.LinkInfo)
			}
		}},
		{"/links/extoutside", KindExternalLink, func(t *testing.T, o *Object) {
			if !o.OutsideRoot || o.Dangling {
				t.Errorf("link = %+v", o.LinkInfo)
			}
		}},
		{"/links/softgroup/a", KindDataset, func(t *testing.T, o *Object) {
			if o.ResolvedPath != "/misc/a" {
				t.Errorf("resolved path = %q", o.ResolvedPath)
			}
		}},
		{"links/extgroup/data/", KindDataset, func(t *testing.T, o *Object) {
			if o.Path != "/links/extgroup/data" || o.ResolvedPath != "/data" || o.ResolvedFile != "other.h5" || !reflect.DeepEqual(o.Shape, []int64{6}) {
				t.Errorf("object = %+v %+v", o, o.DatasetInfo)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			o, err := f.Browse(context.Background(), fx.main, tc.path)
			if err != nil {
				t.Fatal(err)
			}
			if o.Kind != tc.kind {
				t.Fatalf("kind = %s, want %s", o.Kind, tc.kind)
			}
			tc.check(t, o)
			b, err := json.Marshal(o)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			if m["kind"] != tc.kind || m["path"] == nil {
				t.Errorf("JSON = %s", b)
			}
			if tc.kind == KindDataset {
				for _, k := range []string{"shape", "maxshape", "dtype", "dtype_detail", "size_bytes", "chunks", "filters", "fill_value"} {
					if _, ok := m[k]; !ok {
						t.Errorf("dataset JSON lacks %q: %s", k, b)
					}
				}
			}
			if tc.kind == KindSoftLink || tc.kind == KindExternalLink {
				if _, ok := m["dangling"]; !ok {
					t.Errorf("link JSON lacks dangling: %s", b)
				}
			}
		})
	}
}

func TestBrowseErrors(t *testing.T) {
	fx := sharedFixtures(t)
	f := NewFormat(WithRoot(fx.dir))
	defer f.Close()
	tests := []struct {
		file, path, code string
	}{
		{fx.main, "/nope", qerr.CodeResourceNotFound},
		{fx.main, "/table/nope", qerr.CodeResourceNotFound},
		{fx.main, "/table/x/child", qerr.CodeResourceNotFound},
		{fx.main, "/links/dangling/child", qerr.CodeDanglingLink},
		{fx.main, "/links/extoutside/child", qerr.CodePathOutsideRoot},
		{fx.main, "/links/extmissing/child", qerr.CodeDanglingLink},
		{fx.main, "/links/loop1/x", qerr.CodeDanglingLink},
		{fx.dir + "/missing.h5", "/", qerr.CodeResourceNotFound},
	}
	for _, tc := range tests {
		_, err := f.Browse(context.Background(), tc.file, tc.path)
		if qerr.Code(err) != tc.code {
			t.Errorf("Browse(%s) = %v, want %s", tc.path, err, tc.code)
		}
	}
	// Without a root, external links may not leave the file's directory.
	g := NewFormat()
	defer g.Close()
	o, err := g.Browse(context.Background(), fx.main, "/links/extoutside")
	if err != nil || !o.OutsideRoot {
		t.Errorf("without a root: %+v, %v", o, err)
	}
	o, err = g.Browse(context.Background(), fx.main, "/links/ext")
	if err != nil || o.Dangling || o.OutsideRoot {
		t.Errorf("without a root, same directory: %+v, %v", o, err)
	}
}

// buildAttrCaps writes a file whose group /g (a two-column table) and
// dataset /g/x carry attributes beyond the JSON caps.
func buildAttrCaps(path string) error {
	b := &builder{}
	defer b.closeAll()
	f := b.id(h5write.CreateFile(path))
	if b.err != nil {
		return b.err
	}
	f64 := b.t(h5.NewFloat(8))
	g := b.id(h5write.CreateGroup(f, "/g"))
	huge := make([]float64, 5000)
	for i := range huge {
		huge[i] = float64(i) / 2
	}
	b.check(h5write.SetAttr(g, "huge", huge))
	b.check(h5write.SetAttr(g, "history", strings.Repeat("λ", h5.MaxAttrStringChars+1)))
	b.check(h5write.SetAttr(g, "scale", math.NaN()))
	b.check(h5write.SetAttr(g, "range", []float64{math.Inf(-1), math.Inf(1)}))
	op := b.id(h5.NewOpaque(4, "raw"))
	a := b.id(h5write.CreateAttribute(g, "blob", op, nil))
	blob := []byte{0xde, 0xad, 0xbe, 0xef}
	b.check(h5write.WriteAttribute(a, op, unsafe.Pointer(&blob[0])))
	for _, name := range []string{"x", "y"} {
		d := b.id(h5write.CreateDataset(g, name, f64, []int64{3}, nil))
		b.check(h5write.WriteValues(d, f64, []float64{1, 2, 3}))
		if name == "x" {
			b.check(h5write.SetAttr(d, "units", "m"))
			b.check(h5write.SetAttr(d, "samples", huge))
		}
	}
	return b.err
}

func TestAttributeCapsJSON(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "caps.h5")
	if err := buildAttrCaps(p); err != nil {
		t.Fatal(err)
	}
	floats := func(n int) string {
		var sb strings.Builder
		for i := range n {
			if i > 0 {
				sb.WriteByte(',')
			}
			v, _ := json.Marshal(float64(i) / 2)
			sb.Write(v)
		}
		return sb.String()
	}
	hugeJSON := `{"truncated":true,"dtype":"float64","shape":[5000],"element_count":5000,"values":[` + floats(h5.MaxAttrElements) + `]}`
	groupWant := map[string]string{
		"huge":    hugeJSON,
		"history": `{"truncated":true,"dtype":"vlen utf-8 string","shape":[],"element_count":1,"value":"` + strings.Repeat("λ", h5.MaxAttrStringChars) + `","length":4097}`,
		"scale":   `"NaN"`,
		"range":   `["-Infinity","Infinity"]`,
		"blob":    `{"base64":"3q2+7w==","size_bytes":4,"tag":"raw"}`,
	}
	f := NewFormat(WithRoot(dir))
	defer f.Close()
	tests := []struct {
		path string
		want map[string]string
	}{
		{"/g", groupWant},
		{"/g/x", map[string]string{"units": `"m"`, "samples": hugeJSON}},
		{"/g/y", nil},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			o, err := f.Browse(context.Background(), p, tc.path)
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(o) // the resource JSON
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Attributes map[string]json.RawMessage `json:"attributes"`
			}
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			if len(doc.Attributes) != len(tc.want) {
				t.Errorf("%d attributes, want %d: %.500s", len(doc.Attributes), len(tc.want), b)
			}
			for k, want := range tc.want {
				if got := string(doc.Attributes[k]); got != want {
					t.Errorf("attribute %s = %.300s, want %.300s", k, got, want)
				}
			}
		})
	}

	// The catalog table of /g carries the same values.
	dss, err := f.Open(context.Background(), fileInfo(t, dir, p))
	if err != nil {
		t.Fatal(err)
	}
	if len(dss) != 1 || dss[0].ID != "caps/g" {
		t.Fatalf("datasets = %v", dss)
	}
	for k, want := range groupWant {
		if b, err := json.Marshal(dss[0].Attributes[k]); err != nil || string(b) != want {
			t.Errorf("catalog attribute %s = %.300s, %v; want %.300s", k, b, err, want)
		}
	}
}
