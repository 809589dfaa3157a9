package e2e

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
)

// exactCase is one query_data call whose arguments are sent verbatim (JSON
// numbers as written), with the ids it must return or the error it must
// give.
type exactCase struct {
	name, args string
	ids        []int64
	errCode    string
	errHas     []string // substrings of the error message
	errHasNot  string
}

// exactCases: integer values above 2^53 given as JSON numbers select
// exactly the right row (eq, in, range), values beyond the int64 range and
// fractions compare exactly, limit/offset 2^63-1 are accepted, and a
// number no int64 (or float64) holds is refused naming exactly the number
// the client sent.
var exactCases = []exactCase{
	{name: "eq above 2^53", args: `"filters":[{"col":"big","op":"eq","value":9007199254740993}]`, ids: []int64{2}},
	{name: "eq 2^53", args: `"filters":[{"col":"big","op":"eq","value":9007199254740992}]`, ids: []int64{1}},
	{name: "in above 2^53", args: `"filters":[{"col":"big","op":"in","value":[9007199254740993,9007199254740995]}]`, ids: []int64{2}},
	{name: "not_in above 2^53", args: `"filters":[{"col":"big","op":"not_in","value":[9007199254740993]}]`, ids: []int64{1, 3, 4}},
	{name: "range above 2^53", args: `"filters":[{"col":"big","op":"range","value":{"min":-1e30,"max":9007199254740993}}]`, ids: []int64{1, 2, 4}},
	{name: "lt beyond int64", args: `"filters":[{"col":"big","op":"lt","value":9223372036854775813}]`, ids: []int64{1, 2, 3, 4}},
	{name: "gt below int64 as string", args: `"filters":[{"col":"big","op":"gt","value":"-9223372036854775813"}]`, ids: []int64{1, 2, 3, 4}},
	{name: "lte below int64", args: `"filters":[{"col":"big","op":"lte","value":-9223372036854775813}]`, ids: []int64{}},
	{name: "eq 2^63", args: `"filters":[{"col":"big","op":"eq","value":9223372036854775808}]`, ids: []int64{}},
	{name: "gte fraction", args: `"filters":[{"col":"big","op":"gte","value":9007199254740992.5}]`, ids: []int64{2, 3}},
	{name: "limit max int64", args: `"limit":9223372036854775807,"offset":1`, ids: []int64{2, 3, 4}},
	{name: "offset max int64", args: `"offset":9223372036854775807`, ids: []int64{}},
	{name: "limit 2^63", args: `"limit":9223372036854775808`, errCode: "invalid_argument",
		errHas: []string{"9223372036854775808"}, errHasNot: "9223372036854776000"},
	{name: "1e400", args: `"filters":[{"col":"big","op":"lt","value":1e400}]`, errCode: "invalid_argument",
		errHas: []string{"1e400", "filters[0].value"}},
}

// exactRoot writes the data root of TestExactNumbers*.
func exactRoot(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	csv := "id,big\n1,9007199254740992\n2,9007199254740993\n3,9223372036854775807\n4,-9223372036854775808\n"
	if err := os.WriteFile(filepath.Join(dir, "nums.csv"), []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func exactArgs(c exactCase) json.RawMessage {
	return json.RawMessage(`{"dataset":"nums","columns":["id"],"order_by":[{"col":"id"}],` + c.args + `}`)
}

// checkExact compares a query_data result (structured content or error JSON) with c.
func checkExact(t *testing.T, c exactCase, isError bool, body []byte) {
	t.Helper()
	if c.errCode != "" {
		var e toolErr
		if !isError || json.Unmarshal(body, &e) != nil {
			t.Fatalf("%s: want a structured error, got %s", c.name, body)
		}
		if e.Code != c.errCode {
			t.Errorf("%s: code %q, want %q: %s", c.name, e.Code, c.errCode, body)
		}
		for _, s := range c.errHas {
			if !strings.Contains(e.Error, s) {
				t.Errorf("%s: error %q does not name %q", c.name, e.Error, s)
			}
		}
		if c.errHasNot != "" && strings.Contains(string(body), c.errHasNot) {
			t.Errorf("%s: error quotes %s, which the client never sent: %s", c.name, c.errHasNot, body)
		}
		return
	}
	if isError {
		t.Fatalf("%s: %s", c.name, body)
	}
	var q struct {
		Data []struct {
			ID int64 `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &q); err != nil {
		t.Fatalf("%s: %v: %s", c.name, err, body)
	}
	ids := []int64{}
	for _, r := range q.Data {
		ids = append(ids, r.ID)
	}
	if !slices.Equal(ids, c.ids) {
		t.Errorf("%s: ids %v, want %v", c.name, ids, c.ids)
	}
}

func runExact(t *testing.T, cl *client.Client) {
	for _, c := range exactCases {
		res := callRaw(t, cl, "query_data", exactArgs(c))
		body := []byte(text(res))
		if !res.IsError {
			var err error
			if body, err = json.Marshal(res.StructuredContent); err != nil {
				t.Fatal(err)
			}
		}
		checkExact(t, c, res.IsError, body)
	}
}

func TestExactNumbersStdio(t *testing.T) {
	runExact(t, startStdio(t, "--data", exactRoot(t)))
}

func TestExactNumbersHTTP(t *testing.T) {
	c, _ := startHTTP(t, "--data", exactRoot(t))
	runExact(t, c)
}

func TestExactNumbersCall(t *testing.T) {
	root := exactRoot(t)
	for _, c := range exactCases {
		cmd := exec.Command(binary, "call", "query_data", "--data", root, "--log-level", "warn", "--args", string(exactArgs(c)))
		cmd.Env = env()
		out, err := cmd.Output()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("%s: %v", c.name, err)
		}
		checkExact(t, c, err != nil, out)
	}
}
