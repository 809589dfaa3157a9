package artifacts

import (
	"strings"
	"testing"
)

// TestOwner: an artifact is readable only by the principal it was created
// for; any other principal gets exactly the error of a missing artifact
// (no existence oracle). Artifacts adopted after a restart have no known
// owner and belong to "" (unauthenticated servers) only.
func TestOwner(t *testing.T) {
	dir := t.TempDir()
	s := open(t, Options{Dir: dir})
	create := func(owner, content string) Artifact {
		w, err := s.Create("csv", owner)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Abort()
		if _, err := w.Write([]byte(content)); err != nil {
			t.Fatal(err)
		}
		a, err := w.Commit()
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	alice := create("alice", "alice's rows")
	anon := create("", "anonymous rows")
	missing := URIPrefix + idPrefix + "aaaaaaaaaaaaaaaaaaaaaaaaaa.csv"
	_, missingErr := s.Get(missing, "alice")
	if !isGone(missingErr) {
		t.Fatalf("missing artifact: %v", missingErr)
	}
	tests := []struct {
		uri, principal, want string // want "" => refused like a missing artifact
	}{
		{alice.URI, "alice", "alice's rows"},
		{alice.URI, "bob", ""},
		{alice.URI, "", ""},
		{alice.URI, "Alice", ""},
		{anon.URI, "", "anonymous rows"},
		{anon.URI, "alice", ""},
	}
	for _, tc := range tests {
		b, _, err := s.ReadAll(tc.uri, tc.principal, -1)
		_, gerr := s.Get(tc.uri, tc.principal)
		if tc.want != "" {
			if err != nil || gerr != nil || string(b) != tc.want {
				t.Errorf("%s as %q: %q %v %v", tc.uri, tc.principal, b, err, gerr)
			}
			continue
		}
		for _, e := range []error{err, gerr} {
			if !isGone(e) || e.Error() != strings.ReplaceAll(missingErr.Error(), missing, tc.uri) {
				t.Errorf("%s as %q: %v, want the missing-artifact error", tc.uri, tc.principal, e)
			}
		}
	}
	// Refused reads do not delete: the owner still reads it.
	if b, _, err := s.ReadAll(alice.URI, "alice", -1); err != nil || string(b) != "alice's rows" {
		t.Fatalf("after refusals: %q %v", b, err)
	}

	// A restart forgets owners: adopted artifacts belong to "".
	s2 := open(t, Options{Dir: dir})
	if _, err := s2.Get(alice.URI, "alice"); !isGone(err) {
		t.Fatalf("adopted artifact served to a principal: %v", err)
	}
	if b, _, err := s2.ReadAll(alice.URI, "", -1); err != nil || string(b) != "alice's rows" {
		t.Fatalf("adopted artifact, principal \"\": %q %v", b, err)
	}
}
