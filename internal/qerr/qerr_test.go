package qerr_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"

	"github.com/quarrydb/quarry/internal/qerr"
)

func TestCategoriesAndCodes(t *testing.T) {
	cause := io.ErrUnexpectedEOF
	cases := []struct {
		name string
		err  error
		cat  error
		code string
	}{
		{"invalid", qerr.Invalid(qerr.CodeInvalidFilter, "bad %s", "op"), qerr.ErrInvalidArgument, qerr.CodeInvalidFilter},
		{"not found", qerr.NotFound(qerr.CodeDatasetNotFound, "no"), qerr.ErrNotFound, qerr.CodeDatasetNotFound},
		{"unsupported", qerr.Unsupported(qerr.CodeUnsupportedFormat, "xlsx"), qerr.ErrUnsupported, qerr.CodeUnsupportedFormat},
		{"limit", qerr.Limit(qerr.CodeResourceExhausted, "big"), qerr.ErrLimitExceeded, qerr.CodeResourceExhausted},
		{"internal keeps cause", qerr.Internal(cause, "read"), qerr.ErrInternal, qerr.CodeInternal},
		{"wrapped with %w", fmt.Errorf("outer: %w", qerr.NotFound(qerr.CodeHandleExpired, "gone")), qerr.ErrNotFound, qerr.CodeHandleExpired},
		{"deadline", context.DeadlineExceeded, qerr.ErrLimitExceeded, qerr.CodeTimeout},
		{"canceled", context.Canceled, qerr.ErrInvalidArgument, qerr.CodeCancelled},
		{"plain error", errors.New("boom"), qerr.ErrInternal, qerr.CodeInternal},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := qerr.As(c.err)
			if !errors.Is(e, c.cat) {
				t.Errorf("errors.Is(%v, %v) = false", e, c.cat)
			}
			if qerr.Code(c.err) != c.code {
				t.Errorf("code %q, want %q", qerr.Code(c.err), c.code)
			}
		})
	}
	if !errors.Is(qerr.Internal(cause, "x"), io.ErrUnexpectedEOF) {
		t.Error("cause not reachable with errors.Is")
	}
	if qerr.As(nil) != nil || qerr.Code(nil) != "" {
		t.Error("nil handling")
	}
}

func TestJSONShape(t *testing.T) {
	e := qerr.Invalid(qerr.CodeInvalidColumn, "unknown column %q", "regon").WithHint("did you mean region?").
		With("suggestions", []string{"region"}).Wrap(io.EOF)
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if len(m) != 4 || m["code"] != "invalid_column" || m["hint"] == "" || m["error"] != `unknown column "regon"` || m["diagnostics"] == nil {
		t.Fatalf("shape: %s", b)
	}
	bare, _ := json.Marshal(qerr.NotFound(qerr.CodeDatasetNotFound, "x"))
	if string(bare) != `{"error":"x","code":"dataset_not_found"}` {
		t.Fatalf("bare error %s", bare)
	}
}

func TestSuggest(t *testing.T) {
	cols := []string{"region", "regional_code", "price", "unit_price", "quantity", "ordered_at"}
	cases := []struct {
		name string
		want []string
	}{
		{"regon", []string{"region"}},
		{"REGION", []string{"region"}},
		{"prce", []string{"price"}},
		{"qty", nil},
		{"ordered", []string{"ordered_at"}},
		{"zzzzzz", nil},
	}
	for _, c := range cases {
		got := qerr.Suggest(c.name, cols, 1)
		if !slices.Equal(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
			t.Errorf("Suggest(%q) = %v, want %v", c.name, got, c.want)
		}
	}
	if n := len(qerr.Suggest("price", cols, 3)); n != 2 {
		t.Errorf("Suggest(price, 3) returned %d, want price and unit_price", n)
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"abc", "", 3},
		{"kitten", "sitting", 3},
		{"not-in", "not_in", 1},
		{"in", "not_in", 4},
		{"größe", "grösse", 2}, // runes, not bytes
		{"flaw", "lawn", 2},
	} {
		if got := qerr.EditDistance(c.a, c.b); got != c.want {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := qerr.EditDistance(c.b, c.a); got != c.want {
			t.Errorf("EditDistance(%q, %q) = %d, want %d (not symmetric)", c.b, c.a, got, c.want)
		}
	}
}

func ExampleSuggest() {
	fmt.Println(qerr.Suggest("tempreature", []string{"temperature", "pressure", "station"}, 2))
	// Output: [temperature]
}
