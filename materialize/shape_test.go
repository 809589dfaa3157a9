package materialize

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestReshape(t *testing.T) {
	tricky := `[{"s":"a,b","n":1,"b":true,"z":null},{"s":"say \"hi\"\nthere","n":-2.5e-7,"b":false,"z":"x"},` +
		`{"s":"","n":9007199254740993,"b":null,"z":"123"},{"s":"NaN","n":0,"b":true,"z":" lead\r\n"}]`
	cases := []struct {
		name, in, shape, want string
		err                   error
	}{
		{name: "records unchanged", in: `[{"a":1}]`, shape: ShapeRecords, want: `[{"a":1}]`},
		{name: "default unchanged", in: `[{"a":1}]`, shape: "", want: `[{"a":1}]`},
		{name: "columns", in: `[{"a":1,"b":"x"},{"a":null,"b":"y"}]`, shape: ShapeColumns, want: `{"a":[1,null],"b":["x","y"]}`},
		{name: "columns nested values", in: `[{"a":[1,2],"b":{"k":1}}]`, shape: ShapeColumns, want: `{"a":[[1,2]],"b":[{"k":1}]}`},
		{name: "columns empty", in: `[]`, shape: ShapeColumns, want: `{}`},
		{name: "csv", in: `[{"a":1,"b":"x"},{"a":null,"b":"y,z"}]`, shape: ShapeCSV, want: `"a,b\n1,x\n,\"y,z\"\n"`},
		{name: "csv quotes what would read back otherwise", in: `[{"a":"","b":"12","c":"true","d":"null","e":" x","f":"NaN","g":"1e5x"}]`, shape: ShapeCSV,
			want: `"a,b,c,d,e,f,g\n\"\",\"12\",\"true\",\"null\",\" x\",NaN,1e5x\n"`},
		{name: "csv empty", in: `[]`, shape: ShapeCSV, want: `"\n"`},
		{name: "csv nested falls back", in: `[{"a":[1,2]}]`, shape: ShapeCSV, want: `[{"a":[1,2]}]`, err: ErrShapeNested},
		{name: "hdf5 nested lists unchanged", in: `[[1,2],[3,4]]`, shape: ShapeCSV, want: `[[1,2],[3,4]]`},
		{name: "ragged records unchanged", in: `[{"a":1},{"b":2}]`, shape: ShapeColumns, want: `[{"a":1},{"b":2}]`},
		{name: "missing key unchanged", in: `[{"a":1,"b":2},{"a":3}]`, shape: ShapeColumns, want: `[{"a":1,"b":2},{"a":3}]`},
		{name: "columns tricky", in: tricky, shape: ShapeColumns,
			want: `{"s":["a,b","say \"hi\"\nthere","","NaN"],"n":[1,-2.5e-7,9007199254740993,0],"b":[true,false,null,true],"z":[null,"x","123"," lead\r\n"]}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Reshape(json.RawMessage(c.in), c.shape)
			if !errors.Is(err, c.err) {
				t.Fatalf("err %v, want %v", err, c.err)
			}
			if string(got) != c.want {
				t.Fatalf("got  %s\nwant %s", got, c.want)
			}
		})
	}
	if _, err := Reshape(json.RawMessage(`[{"a":1}]`), "xml"); err == nil {
		t.Fatal("unknown shape accepted")
	}
}

// TestReshapeCSVRoundTrip reads the csv shape back with the documented
// rule and gets the records it was made from, value for value.
func TestReshapeCSVRoundTrip(t *testing.T) {
	for _, in := range []string{
		`[{"s":"a,b","n":1,"b":true,"z":null},{"s":"say \"hi\"\nthere","n":-2.5e-7,"b":false,"z":"x"},` +
			`{"s":"","n":9007199254740993,"b":null,"z":"123"},{"s":"NaN","n":0,"b":true,"z":" lead\r\n"}]`,
		`[{"a \"quoted\", name":"\u00e9\u4e2d","null":"null","t":"true ","x":"-","y":"1.5e3","e":"","w":" "}]`,
		`[]`,
	} {
		out, err := Reshape(json.RawMessage(in), ShapeCSV)
		if err != nil {
			t.Fatal(err)
		}
		var text string
		if err := json.Unmarshal(out, &text); err != nil {
			t.Fatal(err)
		}
		var want []map[string]any
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatal(err)
		}
		got := readShapeCSV(t, text)
		if len(want) == 0 && len(got) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round trip of %s\ngot  %v\nwant %v", in, got, want)
		}
	}
}

// readShapeCSV parses ShapeCSV text with the documented rule: quoted fields
// are strings; unquoted fields are null when empty, numbers or booleans
// when JSON reads them as such, else strings.
func readShapeCSV(t *testing.T, text string) []map[string]any {
	t.Helper()
	var rows [][]any
	var row []any
	for i := 0; i < len(text); {
		var v any
		if text[i] == '"' {
			var b strings.Builder
			for i++; ; i++ {
				if i >= len(text) {
					t.Fatalf("unterminated quote in %q", text)
				}
				if text[i] == '"' {
					if i+1 < len(text) && text[i+1] == '"' {
						b.WriteByte('"')
						i++
						continue
					}
					i++
					break
				}
				b.WriteByte(text[i])
			}
			v = b.String()
		} else {
			j := strings.IndexAny(text[i:], ",\n")
			if j < 0 {
				t.Fatalf("unterminated line in %q", text)
			}
			if lit := text[i : i+j]; lit != "" && json.Unmarshal([]byte(lit), &v) != nil {
				v = lit
			}
			i += j
		}
		row = append(row, v)
		switch {
		case i < len(text) && text[i] == ',':
			i++
		case i < len(text) && text[i] == '\n':
			i++
			rows, row = append(rows, row), nil
		default:
			t.Fatalf("field not followed by , or newline at %d in %q", i, text)
		}
	}
	var out []map[string]any
	for _, r := range rows[1:] {
		m := map[string]any{}
		for j, name := range rows[0] {
			m[name.(string)] = r[j]
		}
		out = append(out, m)
	}
	return out
}
