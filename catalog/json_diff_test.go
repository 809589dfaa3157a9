package catalog

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The byte-level JSON reader (json_records.go) against the encoding/json
// one it replaced (json_oracle_test.go): the same records, field by field,
// or an error at the same record, on the existing test inputs and on
// generated files (nested objects, arrays, nulls, escapes, surrogates,
// invalid UTF-8, big integers, mixed types, duplicate keys, blank lines,
// CRLF, BOM, both layouts), read through windows of many sizes so records
// are cut everywhere; and scans (typed straight into Arrow builders)
// against the old text-then-convert path.

// jsonDiffLimits: records never reach the limit (the old reader's limit
// was approximate: it counted the decoder's read-ahead).
var jsonDiffLimits = Limits{MaxRecordBytes: 4 << 20}.WithDefaults()

// jsonDiffWindows are the window sizes the byte-level reader is run with.
var jsonDiffWindows = []int{1, 2, 3, 5, 16, 61, 4096, jsonWindow}

// jsonReadAll reads every record of data (BOM skipped, as openJSON does)
// with the byte-level reader (window bytes) or, with oracle, the
// encoding/json one; fields are copied.
func jsonReadAll(data []byte, lim Limits, window int, oracle bool) ([][]jsonField, error) {
	br := bufio.NewReaderSize(bytes.NewReader(data), 64<<10)
	SkipBOM(br)
	var next func() (bool, error)
	var fields func() []jsonField
	if oracle {
		r, err := newOracleRecords(br, lim)
		if err != nil {
			return nil, err
		}
		next, fields = r.next, func() []jsonField { return r.fields }
	} else {
		r, err := newJSONRecordsWindow(br, lim, window)
		if err != nil {
			return nil, err
		}
		next, fields = r.next, func() []jsonField { return r.fields }
	}
	var out [][]jsonField
	for {
		more, err := next()
		if err != nil || !more {
			return out, err
		}
		rec := make([]jsonField, 0, len(fields()))
		for _, f := range fields() {
			rec = append(rec, jsonField{name: strings.Clone(f.name), kind: f.kind, text: strings.Clone(f.text)})
		}
		out = append(out, rec)
	}
}

// jsonErrClass is what an error of either reader must agree on: its kind
// and the record it names.
var jsonErrClass = regexp.MustCompile(`^(invalid JSON in record \d+|the file ends inside record \d+|record \d+ is not an object \([a-z ]+\)|unexpected data after the top-level array|record \d+ has a key longer|the file is empty|the file does not start with)`)

func jsonErrKind(err error) string {
	if err == nil {
		return "ok"
	}
	if m := jsonErrClass.FindString(err.Error()); m != "" {
		return m
	}
	return err.Error()
}

// checkJSONRecordsDiff fails t when the byte-level reader disagrees with
// the oracle on data for any window size.
func checkJSONRecordsDiff(t *testing.T, data []byte, windows []int) {
	t.Helper()
	want, werr := jsonReadAll(data, jsonDiffLimits, 0, true)
	for _, w := range windows {
		got, gerr := jsonReadAll(data, jsonDiffLimits, w, false)
		if jsonErrKind(gerr) != jsonErrKind(werr) {
			t.Fatalf("window %d, input %q:\nerror %v\nwant  %v", w, data, gerr, werr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("window %d, input %q:\nrecords %+v\nwant    %+v", w, data, got, want)
		}
	}
}

// jsonDiffInputs are the JSON inputs of the other tests (json_test.go,
// FuzzJSON's seeds and corpus) and edge cases of the tokenizer.
func jsonDiffInputs(t *testing.T) []string {
	in := []string{
		`{"id": 1, "zip": "00501", "x": 1.5, "ok": true, "day": "2015-01-31", "p": {"lat": 1, "lon": {"deg": 2}}, "tags": ["a", {"b": null}]}` + "\n" +
			"\n" + `{"id": 2, "x": 2, "ok": false, "day": "2015-02-01", "extra": "late"}` + "\n" +
			`{"id": 12345678901234567, "zip": "10001", "x": null, "ok": null, "day": null, "p": {"lat": -0.5}}`,
		"\ufeff[\n  {\"a\": 99999999999999999999, \"b\": \"2015/01/01 01:00:00\", \"c\": 1, \"d\": -0},\n  {\"a\": 1, \"b\": \"2015/01/02 13:30:00\", \"c\": \"x\", \"d\": 1}\n]\n",
		`{"d": "2015-01-31", "n": "123"}` + "\n" + `{"d": "N/A", "n": "0042"}` + "\n",
		"  \n", "42", "[1, 2]", "{\"a\": 1}\n{\"a\": }\n", "[{\"a\": 1}, {\"a\"", "[{\"a\": 1}] x", "[{}, {}]",
		`{"a": 1, "b": "x"}` + "\n" + `{"a": 2.5, "c": [1, {"d": null}]}`,
		`[{"id": "00501", "t": "2015/01/01 01:00:00", "n": {"x": -0}}, {"id": "1", "t": null}]`,
		`{"a": 12345678901234567890, "b": true, "c": "Jan 1 2000"} {"a": 1e3, "b": false, "c": "February 29, 2000"}`,
		"\ufeff[]",
		`{"a": {"b": {"c": "2015-01-31T10:00:00Z"}}, "a.b.c": "dup"}`,
		// tokenizer edges
		`{}{}{"a":1}`, `{"a":1},{"a":2}`, "{\"a\":1}\r\n\r\n{\"a\":2}\r\n", `[ ]`, `[{"a":1},]`, `[,{"a":1}]`, `[{"a":1}]]`, `[{"a":1}`, `[{"a":1},`,
		`{"a":1,}`, `{"a" 1}`, `{"a":1 "b":2}`, `{,}`, `{"a":01}`, `{"a":1.}`, `{"a":1e}`, `{"a":-}`, `{"a":1.5e+3,"b":-0.0,"c":2E-2}`,
		`{"a":tru}`, `{"a":nul}`, `{"a":falsey}`, `{"a":truex}`, `{"a":"x`, `{"a":"\x"}`, `{"a":"\u12g4"}`, "{\"a\":\"tab\there\"}",
		`{"a":"\ud83d\ude00 \ud800 \udc00x \ud800\u0041 \u00e9\u2028"}`, "{\"a\":\"\xff\xc3 ok \xe2\x82\xac\"}", "{\"\xff\":1}",
		`{"a":["<&>", "\u2028", "\"q\"", "\\", "\/", "\ud800", "x\ty", 1e3, -0, true, null, {"k<":[]}, [], {}]}`,
		"{\"a\":[\"\x7f\xff\"]}", `{"a":{"b":null},"c":[[[1]]]}`, `{"a":null}` + "\n" + `{"a":{"b":1}}`,
		`{"a":1} x`, `{"a":1} 1x`, `{"a":1} "s"`, `{"a":1} null`, `{"a":1} [`, `{"a":1} tru`, `{"a":1} ]`, `{"a":1}` + "\x00",
		`{"a":[1,]}`, `{"a":[1 2]}`, `{"a":[{"b"}]}`, `{"a":[{"b":1,}]}`, `{"a":[{1:2}]}`, `{"a":{"b":1,"b":2}}`, `{"é\u00e9":1}`,
	}
	for _, dir := range []string{"FuzzJSON", "FuzzJSONRecords"} {
		files, _ := filepath.Glob(filepath.Join("testdata", "fuzz", dir, "*"))
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if v, ok := fuzzCorpusBytes(data); ok {
				in = append(in, string(v))
			}
		}
	}
	return in
}

// fuzzCorpusBytes is the []byte value of a one-argument corpus file.
func fuzzCorpusBytes(file []byte) ([]byte, bool) {
	lines := strings.SplitN(string(file), "\n", 3)
	if len(lines) < 2 || !strings.HasPrefix(lines[1], "[]byte(") {
		return nil, false
	}
	s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
	return []byte(s), err == nil
}

// TestJSONRecordsDiff: the existing inputs, edge cases, generated files
// and mutations of them read alike by both readers.
func TestJSONRecordsDiff(t *testing.T) {
	for _, s := range jsonDiffInputs(t) {
		checkJSONRecordsDiff(t, []byte(s), jsonDiffWindows)
	}
	rng := rand.New(rand.NewPCG(12, 34))
	for range 300 {
		data := genJSONFile(rng, 1+rng.IntN(12))
		checkJSONRecordsDiff(t, data, jsonDiffWindows)
		for range 4 {
			checkJSONRecordsDiff(t, mutateJSON(rng, data), []int{1, 7, jsonWindow})
		}
	}
}

// TestJSONScanDiff: generated files scan (columns typed straight into
// their builders) to what the old path gives, every cell as text through
// convertText, from the oracle's records; nothing leaks.
func TestJSONScanDiff(t *testing.T) {
	rng := rand.New(rand.NewPCG(56, 78))
	for i := range 60 {
		data := genJSONFile(rng, 1+rng.IntN(40))
		t.Run(strconv.Itoa(i), func(t *testing.T) { checkJSONScanDiff(t, data) })
	}
}

func checkJSONScanDiff(t *testing.T, data []byte) {
	root := t.TempDir()
	p := filepath.Join(root, "f.jsonl")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	recs, oerr := jsonReadAll(data, Limits{}.WithDefaults(), 0, true)
	dss, err := NewJSONFormat(Limits{}).Open(context.Background(), FileInfo{AbsPath: p, RelPath: "f.jsonl", BaseID: "f", Size: st.Size(), ModTime: st.ModTime(), Root: root})
	if err != nil {
		for _, rec := range recs {
			if oerr == nil && len(rec) > 0 {
				t.Fatalf("open: %v; the oracle read %d records", err, len(recs))
			}
		}
		return
	}
	if oerr != nil || int64(len(recs)) != dss[0].RowCount {
		t.Fatalf("opened %d rows; the oracle read %d records, %v", dss[0].RowCount, len(recs), oerr)
	}
	src := dss[0].Source.(*jsonSource)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rr, err := src.Scan(context.Background(), ScanOptions{Alloc: mem, BatchSize: 7})
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	got := make([][]arrow.Array, src.schema.NumFields())
	defer func() {
		for _, c := range got {
			releaseAll(c)
		}
	}()
	for rr.Next() {
		for j, c := range rr.RecordBatch().Columns() {
			c.Retain()
			got[j] = append(got[j], c)
		}
	}
	if err := rr.Err(); err != nil {
		t.Fatal(err)
	}
	for j, f := range src.schema.Fields() {
		tb := array.NewStringBuilder(mem)
		for _, rec := range recs {
			var cell *jsonField
			for k := range rec {
				if rec[k].name == f.Name {
					cell = &rec[k] // the last value wins
				}
			}
			if cell == nil || cell.kind == jNull {
				tb.AppendNull()
			} else {
				tb.Append(cell.text)
			}
		}
		texts := tb.NewStringArray()
		tb.Release()
		want, err := convertText(mem, texts, src.kinds, src.types, j)
		texts.Release()
		if err != nil {
			t.Fatalf("column %s: %v", f.Name, err)
		}
		all, err := array.Concatenate(got[j], mem)
		if err != nil {
			want.Release()
			t.Fatal(err)
		}
		if !array.Equal(all, want) {
			t.Errorf("column %s (%s):\nscan %v\nwant %v", f.Name, f.Type, all, want)
		}
		all.Release()
		want.Release()
	}
}

// genJSONFile writes rows random records: typed keys (int, float, date,
// timestamp, bool, text) that keep their type, and keys of mixed and
// nested values; random whitespace, blank lines, CRLF, a BOM, either
// layout.
func genJSONFile(rng *rand.Rand, rows int) []byte {
	var b bytes.Buffer
	if rng.IntN(6) == 0 {
		b.WriteString("\ufeff")
	}
	nl := "\n"
	if rng.IntN(3) == 0 {
		nl = "\r\n"
	}
	array := rng.IntN(4) == 0
	if array {
		b.WriteString("[" + nl)
	}
	for r := range rows {
		if r > 0 && array {
			b.WriteString(",")
		}
		if rng.IntN(6) == 0 {
			b.WriteString(nl)
		}
		genJSONObject(rng, &b, 0)
		b.WriteString(nl)
	}
	if array {
		b.WriteString("]" + nl)
	}
	return b.Bytes()
}

func genJSONObject(rng *rand.Rand, b *bytes.Buffer, depth int) {
	typed := []struct {
		key string
		gen func() string
	}{
		{"id", func() string { return strconv.FormatInt(rng.Int64N(1e12)-5e11, 10) }},
		{"price", func() string { return fmt.Sprintf("%d.%d", rng.IntN(100000), 1+rng.IntN(99)) }},
		{"day", func() string { return fmt.Sprintf(`"20%02d-%02d-%02d"`, rng.IntN(30), 1+rng.IntN(12), 1+rng.IntN(28)) }},
		{"ts", func() string {
			return `"` + time.Unix(rng.Int64N(2e9), 0).UTC().Format("2006-01-02 15:04:05") + `"`
		}},
		{"ok", func() string { return strconv.FormatBool(rng.IntN(2) == 0) }},
		{"name", func() string { return genJSONString(rng) }},
	}
	ws := func() {
		if rng.IntN(4) == 0 {
			b.WriteString([]string{" ", "  ", "\t", "\n", "\r\n"}[rng.IntN(5)])
		}
	}
	b.WriteByte('{')
	ws()
	n := 0
	member := func(key, val string) {
		if n > 0 {
			b.WriteByte(',')
			ws()
		}
		n++
		b.WriteString(key)
		ws()
		b.WriteByte(':')
		ws()
		b.WriteString(val)
		ws()
	}
	if depth == 0 {
		for _, k := range typed {
			switch rng.IntN(8) {
			case 0: // missing
			case 1:
				member(strconv.Quote(k.key), "null")
			default:
				member(strconv.Quote(k.key), k.gen())
			}
		}
	}
	keys := []string{`"mixed"`, `"nest"`, `"arr"`, `"big"`, `"k\u00e9y"`, `"x.y"`, `"x"`, `"mixed"`}
	for range rng.IntN(4) {
		k := keys[rng.IntN(len(keys))]
		if k == `"nest"` && depth < 2 {
			var sub bytes.Buffer
			genJSONObject(rng, &sub, depth+1)
			member(k, sub.String())
			continue
		}
		member(k, genJSONValue(rng, depth))
	}
	b.WriteByte('}')
}

func genJSONValue(rng *rand.Rand, depth int) string {
	switch rng.IntN(11) {
	case 0:
		return "null"
	case 1:
		return strconv.FormatBool(rng.IntN(2) == 0)
	case 2:
		return strconv.Itoa(rng.IntN(1000) - 500)
	case 3:
		return []string{"12345678901234567890", "-9223372036854775808", "9223372036854775807", "9223372036854775808", "0", "-0"}[rng.IntN(6)]
	case 4:
		return []string{"1.5", "-0.0", "1e3", "1E-7", "2.5e+10", "0.1", "100.25", "3.0"}[rng.IntN(8)]
	case 5, 6:
		return genJSONString(rng)
	case 7:
		return []string{`"2015-01-31"`, `"2015/01/01 01:00:00"`, `"Jan 1 2000"`, `"2015-01-31T10:00:00Z"`, `"00501"`, `"N/A"`}[rng.IntN(6)]
	case 8, 9:
		if depth < 3 {
			var parts []string
			for range rng.IntN(4) {
				parts = append(parts, genJSONValue(rng, depth+1))
			}
			return "[" + strings.Join(parts, []string{",", " , ", ",\n"}[rng.IntN(3)]) + "]"
		}
		return "[]"
	default:
		if depth < 3 {
			var b bytes.Buffer
			genJSONObject(rng, &b, depth+1)
			return b.String()
		}
		return "{}"
	}
}

// genJSONString is a JSON string with escapes, unicode (raw and escaped,
// surrogate pairs and lone surrogates), HTML characters and stray bytes.
func genJSONString(rng *rand.Rand) string {
	pieces := []string{"abc", "north west", " ", `\"`, `\\`, `\/`, `\n`, `\t`, `\b\f\r`, `\u00e9`, `\u00E9`, "é", "€", "😀",
		`\ud83d\ude00`, `\ud800`, `\udc00`, `\ud800\u0041`, `\u2028`, `\u0000`, "<", ">", "&", "\xff", "\xc3", "\x7f", "\xed\xa0\x80", "0042", "2015-01-31"}
	var b strings.Builder
	b.WriteByte('"')
	for range rng.IntN(5) {
		b.WriteString(pieces[rng.IntN(len(pieces))])
	}
	b.WriteByte('"')
	return b.String()
}

// mutateJSON cuts data short or puts a stray byte somewhere, for the
// error paths.
func mutateJSON(rng *rand.Rand, data []byte) []byte {
	if len(data) == 0 {
		return data
	}
	out := bytes.Clone(data)
	i := rng.IntN(len(out))
	switch rng.IntN(3) {
	case 0:
		return out[:i]
	case 1:
		const stray = "{}[],:\"\\x0 -.e\n\x01"
		out[i] = stray[rng.IntN(len(stray))]
		return out
	}
	return append(out[:i], out[i+1:]...)
}

// FuzzJSONRecords checks the byte-level JSON tokenizer against the
// encoding/json reader it replaced on any input, through windows of
// several sizes. Corpus: testdata/fuzz/FuzzJSONRecords.
func FuzzJSONRecords(f *testing.F) {
	for _, s := range []string{
		`{"a": 1, "b": "x\u00e9", "c": [1, {"d": "<&>"}]}` + "\r\n\r\n" + `{"a": -0.5e3, "n": {"m": null}}`,
		`[{"k\ud83d\ude00": "\ud800"}, {"k": "\xff"}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkJSONRecordsDiff(t, data, []int{1, 3, 64, jsonWindow})
	})
}

// TestJSONRecordsDepth: nesting is bounded (encoding/json's scanner
// limit), so no record can exhaust the stack; below it, arrays of arrays
// read as text.
func TestJSONRecordsDepth(t *testing.T) {
	for _, tc := range []struct {
		depth int
		ok    bool
	}{{jsonMaxDepth - 1, true}, {jsonMaxDepth, false}, {3 * jsonMaxDepth, false}} {
		data := `{"a":` + strings.Repeat("[", tc.depth) + strings.Repeat("]", tc.depth) + "}"
		for _, w := range []int{5, jsonWindow} {
			recs, err := jsonReadAll([]byte(data), jsonDiffLimits, w, false)
			if tc.ok != (err == nil) || (err != nil && !strings.Contains(err.Error(), "exceeded max depth")) {
				t.Fatalf("depth %d, window %d: %v", tc.depth, w, err)
			}
			if tc.ok && (len(recs) != 1 || recs[0][0].text != data[5:len(data)-1]) {
				t.Fatalf("depth %d: %d records", tc.depth, len(recs))
			}
		}
	}
}
