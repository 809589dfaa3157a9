package mcpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/quarrydb/quarry/internal/qerr"
)

// exactArguments returns the arguments of a tool call with every number
// exactly as the client wrote it. mcp-go decodes Params.Arguments with
// float64 numbers (9007199254740993 becomes 9007199254740992, 2^63-1 becomes
// 2^63); the raw JSON it keeps beside them is decoded again here with
// json.Number, and top-level nulls are dropped as dropNullArguments does.
// Calls built in process without raw JSON keep their Arguments.
func exactArguments(req mcp.CallToolRequest) any {
	if len(req.Params.RawArguments) == 0 {
		return req.Params.Arguments
	}
	dec := json.NewDecoder(bytes.NewReader(req.Params.RawArguments))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return req.Params.Arguments
	}
	if m, ok := v.(map[string]any); ok {
		for k, x := range m {
			if x == nil {
				delete(m, k)
			}
		}
	}
	return v
}

// bindStrict decodes tool arguments into out, rejecting unknown argument
// names and wrongly typed values with invalid_argument errors that name the
// field and say what was expected.
func bindStrict(args any, out any) error {
	if args == nil {
		args = map[string]any{}
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return qerr.Invalid(qerr.CodeInvalidArgument, "arguments are not JSON: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err = dec.Decode(out)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := argumentPath(te.Field)
		want := jsonType(te.Type)
		if lo, hi, ok := intBounds(te.Type); ok && strings.HasPrefix(te.Value, "number") {
			want = fmt.Sprintf("an integer from %s to %s", lo, hi)
		}
		return qerr.Invalid(qerr.CodeInvalidArgument, "argument %s: expected %s, got JSON %s", field, want, te.Value).
			With("field", field).WithHint("pass %s as %s", field, want)
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		name = strings.Trim(name, `"`)
		valid := fieldNames(reflect.TypeOf(out).Elem())
		e := qerr.Invalid(qerr.CodeInvalidArgument, "unknown argument %q", name).With("field", name).With("valid_arguments", valid)
		if s := qerr.Suggest(name, valid, 3); len(s) > 0 {
			return e.With("suggestions", s).WithHint("did you mean %s? valid arguments: %s", s[0], strings.Join(valid, ", "))
		}
		return e.WithHint("valid arguments: %s", strings.Join(valid, ", "))
	}
	return qerr.Invalid(qerr.CodeInvalidArgument, "arguments: %v", err).WithHint("check the tool's input schema")
}

// argumentPath is the argument name of a decoding error's field path,
// without the Go names of embedded structs ("EstimateRequest.Spec.limit"
// is "limit"); "arguments" for the whole object.
func argumentPath(field string) string {
	var parts []string
	for p := range strings.SplitSeq(field, ".") {
		if p != "" && !(p[0] >= 'A' && p[0] <= 'Z') {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return "arguments"
	}
	return strings.Join(parts, ".")
}

// intBounds returns the range of an integer type (through pointers).
func intBounds(t reflect.Type) (lo, hi string, ok bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		bits := t.Bits()
		return strconv.FormatInt(-1<<(bits-1), 10), strconv.FormatInt(1<<(bits-1)-1, 10), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "0", strconv.FormatUint(math.MaxUint64>>(64-t.Bits()), 10), true
	}
	return "", "", false
}

func jsonType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Pointer:
		return jsonType(t.Elem())
	}
	return fmt.Sprint(t)
}

// fieldNames lists the JSON argument names of a struct, flattening embedded structs.
func fieldNames(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			out = append(out, fieldNames(f.Type)...)
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}
