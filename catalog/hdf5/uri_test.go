package hdf5

import (
	"strings"
	"testing"

	"github.com/quarrydb/quarry/internal/qerr"
)

func TestParseURI(t *testing.T) {
	tests := []struct {
		uri, file, path string
	}{
		{"h5://physics/experiment.h5?path=/detector/image", "physics/experiment.h5", "/detector/image"},
		{"h5://physics/experiment.h5", "physics/experiment.h5", "/"},
		{"h5://a.h5?path=", "a.h5", "/"},
		{"H5://a.h5?path=runs//x/./y/", "a.h5", "/runs/x/y"},
		{"h5://my%20data/r%C3%A9sum%C3%A9.h5?path=%2Fruns%2Foperator", "my data/résumé.h5", "/runs/operator"},
		{"h5://a.h5?path=/a%20b%2Bc&other=1", "a.h5", "/a b+c"},
		{"h5://a.h5?path=/a+b", "a.h5", "/a b"},
		{"h5:///abs/path/f.h5?path=/g", "/abs/path/f.h5", "/g"},
		{"h5://a.h5?path=/x#frag", "a.h5", "/x"},
		{"h5://a.h5?path=/%D4%B3", "a.h5", "/Գ"},
	}
	for _, tc := range tests {
		file, path, err := ParseURI(tc.uri)
		if err != nil || file != tc.file || path != tc.path {
			t.Errorf("ParseURI(%q) = %q, %q, %v; want %q, %q", tc.uri, file, path, err, tc.file, tc.path)
		}
	}
}

func TestParseURIErrors(t *testing.T) {
	tests := []struct {
		uri, code string
	}{
		{"", qerr.CodeInvalidArgument},
		{"file:///a.h5", qerr.CodeInvalidArgument},
		{"h5://", qerr.CodeInvalidArgument},
		{"h5://?path=/x", qerr.CodeInvalidArgument},
		{"h5://a%zz.h5", qerr.CodeInvalidArgument},
		{"h5://a.h5?path=%zz", qerr.CodeInvalidArgument},
		{"h5://a.h5?path=/a&path=/b", qerr.CodeInvalidArgument},
		{"h5://a%00.h5", qerr.CodeInvalidArgument},
		{"h5://a.h5?path=/x%00", qerr.CodeInvalidArgument},
		{"h5://../etc/passwd.h5", qerr.CodePathOutsideRoot},
		{"h5://a/%2E%2E/%2E%2E/b.h5", qerr.CodePathOutsideRoot},
		{"h5://" + strings.Repeat("a", 9000), qerr.CodeInvalidArgument},
	}
	for _, tc := range tests {
		_, _, err := ParseURI(tc.uri)
		if qerr.Code(err) != tc.code {
			t.Errorf("ParseURI(%q) = %v, want code %s", tc.uri, err, tc.code)
		}
	}
}

func TestFormatURI(t *testing.T) {
	tests := []struct {
		file, path, want string
	}{
		{"physics/experiment.h5", "/runs/operator", "h5://physics/experiment.h5?path=/runs/operator"},
		{"physics/experiment.h5", "", "h5://physics/experiment.h5?path=/"},
		{"my data/x&y.h5", "/a b/c+d?e#f", "h5://my%20data/x%26y.h5?path=/a%20b/c%2Bd%3Fe%23f"},
		{"arm.h5", "Գ", "h5://arm.h5?path=/%D4%B3"},
	}
	for _, tc := range tests {
		got := FormatURI(tc.file, tc.path)
		if got != tc.want {
			t.Errorf("FormatURI(%q, %q) = %q, want %q", tc.file, tc.path, got, tc.want)
		}
		file, path, err := ParseURI(got)
		wantPath, _ := CleanInternalPath(tc.path)
		if err != nil || file != tc.file || path != wantPath {
			t.Errorf("round trip of %q = %q, %q, %v", got, file, path, err)
		}
	}
}

func FuzzParseURI(f *testing.F) {
	for _, s := range []string{"h5://a.h5?path=/x", "h5://physics/experiment.h5", "h5:///abs.h5?path=%2F", "h5://a/../b.h5", "h5://a.h5?path=/a&path=/b", "h5://%zz", "h5://a.h5?path=a+b#c"} {
		f.Add(s, "x/y.h5", "/g/d")
	}
	f.Fuzz(func(t *testing.T, uri, file, path string) {
		rel, ip, err := ParseURI(uri)
		if err != nil {
			if qerr.As(err).Code == qerr.CodeInternal {
				t.Fatalf("ParseURI(%q): internal error %v", uri, err)
			}
		} else {
			if !strings.HasPrefix(ip, "/") || rel == "" || strings.Contains(ip, "//") {
				t.Fatalf("ParseURI(%q) = %q, %q", uri, rel, ip)
			}
			// Parsed URIs re-format to an equivalent URI, unless its
			// percent-encoding (3 bytes for each non-ASCII one) passes
			// maxURILen: found by make fuzz-short (testdata c62880874d699483).
			u := FormatURI(rel, ip)
			rel2, ip2, err := ParseURI(u)
			if len(u) > maxURILen {
				if err == nil {
					t.Fatalf("ParseURI accepted a %d-byte URI", len(u))
				}
			} else if err != nil || rel2 != rel || ip2 != ip {
				t.Fatalf("re-parse of %q: %q %q %v (want %q %q)", uri, rel2, ip2, err, rel, ip)
			}
		}
		// Formatted URIs of anything parse back to the same parts.
		if file == "" || strings.IndexByte(file, 0) >= 0 || strings.IndexByte(path, 0) >= 0 {
			return
		}
		for _, c := range strings.Split(file, "/") {
			if c == ".." {
				return
			}
		}
		u := FormatURI(file, path)
		if len(u) > maxURILen {
			return
		}
		rel, ip, err = ParseURI(u)
		want, _ := CleanInternalPath(path)
		if err != nil || rel != file || ip != want {
			t.Fatalf("ParseURI(FormatURI(%q, %q)) = %q, %q, %v", file, path, rel, ip, err)
		}
	})
}
