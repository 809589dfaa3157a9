package artifacts

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quarrydb/quarry/internal/qerr"
)

const goodID = "a_abcdefghijklmnopqrstuvwxyz"

func TestParseURI(t *testing.T) {
	tests := []struct {
		uri     string
		id, ext string // "" => invalid
	}{
		{URIPrefix + goodID + ".csv", goodID, "csv"},
		{URIPrefix + goodID + ".parquet", goodID, "parquet"},
		{URIPrefix + goodID + ".arrow", goodID, "arrow"},
		{URIPrefix + goodID + ".json", goodID, "json"},
		{URIPrefix + "a_22222222222222222222222222.csv", "a_22222222222222222222222222", "csv"},
		{"", "", ""},
		{URIPrefix, "", ""},
		{URIPrefix + goodID, "", ""},
		{URIPrefix + goodID + ".", "", ""},
		{URIPrefix + goodID + ".txt", "", ""},
		{URIPrefix + goodID + ".CSV", "", ""},
		{URIPrefix + goodID + ".csv.gz", "", ""},
		{URIPrefix + goodID + ".csv/", "", ""},
		{URIPrefix + goodID + ".csv?x=1", "", ""},
		{URIPrefix + goodID + ".csv#f", "", ""},
		{URIPrefix + "A_ABCDEFGHIJKLMNOPQRSTUVWXYZ.csv", "", ""},
		{URIPrefix + "a_abcdefghijklmnopqrstuvwxy1.csv", "", ""}, // 1 not base32
		{URIPrefix + "a_abcdefghijklmnopqrstuvwxy.csv", "", ""},  // short
		{URIPrefix + "a_abcdefghijklmnopqrstuvwxyza.csv", "", ""},
		{URIPrefix + "h_abcdefghijklmnopqrstuvwxyz.csv", "", ""},
		{URIPrefix + "../" + goodID + ".csv", "", ""},
		{URIPrefix + "..", "", ""},
		{URIPrefix + "sub/" + goodID + ".csv", "", ""},
		{URIPrefix + "..\\" + goodID + ".csv", "", ""},
		{URIPrefix + "/etc/passwd", "", ""},
		{URIPrefix + "%2e%2e/" + goodID + ".csv", "", ""},
		{"quarry://artifacts//" + goodID + ".csv", "", ""},
		{"quarry://other/" + goodID + ".csv", "", ""},
		{"quarry://artifactsx/" + goodID + ".csv", "", ""},
		{"QUARRY://artifacts/" + goodID + ".csv", "", ""},
		{"file://artifacts/" + goodID + ".csv", "", ""},
		{"quarry:/artifacts/" + goodID + ".csv", "", ""},
		{"quarry://user@artifacts/" + goodID + ".csv", "", ""},
		{" " + URIPrefix + goodID + ".csv", "", ""},
		{URIPrefix + goodID + ".csv ", "", ""},
		{URIPrefix + goodID + ".csv\x00", "", ""},
		{goodID + ".csv", "", ""},
	}
	for _, tc := range tests {
		id, ext, err := parseURI(tc.uri)
		if tc.id == "" {
			if err == nil || !errors.Is(err, qerr.ErrInvalidArgument) || qerr.Code(err) != qerr.CodeInvalidArgument {
				t.Errorf("parseURI(%q) = %q %q %v, want invalid_argument", tc.uri, id, ext, err)
			}
			continue
		}
		if err != nil || id != tc.id || ext != tc.ext {
			t.Errorf("parseURI(%q) = %q %q %v", tc.uri, id, ext, err)
		}
	}
}

func TestGetInvalidURI(t *testing.T) {
	s := open(t, Options{Dir: t.TempDir()})
	_, err := s.Get("quarry://artifacts/../../etc/passwd", "")
	if !errors.Is(err, qerr.ErrInvalidArgument) || qerr.Code(err) != qerr.CodeInvalidArgument || qerr.As(err).Hint == "" {
		t.Fatalf("err = %v", err)
	}
	if _, err := s.Get(URIPrefix+goodID+".csv", ""); !isGone(err) {
		t.Fatalf("unknown: %v", err)
	}
}

func FuzzParseURI(f *testing.F) {
	for _, s := range []string{
		URIPrefix + goodID + ".csv", URIPrefix + "../x", URIPrefix, "", "quarry://",
		URIPrefix + goodID + ".csv/../../x", URIPrefix + "a_/.csv",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		id, ext, err := parseURI(uri)
		if err != nil {
			if qerr.Code(err) != qerr.CodeInvalidArgument || !errors.Is(err, qerr.ErrInvalidArgument) {
				t.Fatalf("wrong error: %v", err)
			}
			return
		}
		name := id + "." + ext
		if uri != URIPrefix+name {
			t.Fatalf("accepted non-canonical %q", uri)
		}
		if strings.ContainsAny(name, `/\`) || strings.Contains(name, "..") || !filepath.IsLocal(name) || filepath.Base(name) != name {
			t.Fatalf("accepted unsafe name %q", name)
		}
		if !validID(id) || MIMEFor(ext) == "application/octet-stream" {
			t.Fatalf("accepted %q %q", id, ext)
		}
	})
}
