package mcpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/quarrydb/quarry/internal/qerr"
)

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
		field := te.Field
		if field == "" {
			field = "arguments"
		}
		return qerr.Invalid(qerr.CodeInvalidArgument, "argument %s: expected %s, got JSON %s", field, jsonType(te.Type), te.Value).
			With("field", field).WithHint("pass %s as %s", field, jsonType(te.Type))
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
