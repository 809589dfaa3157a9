package handles_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/quarrydb/quarry/handles"
	"github.com/quarrydb/quarry/internal/qerr"
)

func isInvalidToken(err error) bool {
	return errors.Is(err, qerr.ErrInvalidArgument) && qerr.Code(err) == qerr.CodeInvalidPageToken
}

func TestTokenRoundTrip(t *testing.T) {
	r := handles.New[*val](handles.Options{Key: []byte("k")})
	defer r.Close()
	for _, tok := range []handles.Token{
		{},
		{Handle: "h_abc", Offset: 0, Size: 100, Format: "json"},
		{Handle: "h_abc", Offset: 1 << 62, Size: 1, Format: "csv"},
		{Handle: "h_x", Offset: -1, Size: -5, Format: ""},
		{Handle: "h_ünïcode", Offset: 12345, Size: 500, Format: "arrow"},
		{Handle: "h_abc", Offset: 10, Size: 20, Format: "json", MaxBytes: 4096},
		{Handle: "h_abc", Offset: 10, Size: 20, Format: "json", MaxBytes: -1 << 62},
	} {
		s := r.Sign(tok)
		for _, c := range s {
			if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
				t.Fatalf("token %q not URL-safe", s)
			}
		}
		got, err := r.Verify(s, tok.Handle)
		if err != nil {
			t.Fatalf("%+v: %v", tok, err)
		}
		if got != tok {
			t.Fatalf("got %+v, want %+v", got, tok)
		}
		// Empty handle skips the binding check but returns the signed handle.
		got, err = r.Verify(s, "")
		if err != nil || got != tok {
			t.Fatalf("unbound verify: %+v %v", got, err)
		}
	}
}

func TestTokenKeys(t *testing.T) {
	tok := handles.Token{Handle: "h_a", Offset: 10, Size: 10, Format: "json"}
	a := handles.New[*val](handles.Options{Key: []byte("key-a")})
	b := handles.New[*val](handles.Options{Key: []byte("key-b")})
	a2 := handles.New[*val](handles.Options{Key: []byte("key-a")})
	d1 := handles.New[*val](handles.Options{})
	d2 := handles.New[*val](handles.Options{})
	// A token of another key (the server before a restart) is well-formed
	// but its handle is gone: handle_expired, with the re-run hint.
	if _, err := b.Verify(a.Sign(tok), "h_a"); !isRestarted(err) {
		t.Fatalf("other key: %v, want handle_expired", err)
	}
	if _, err := a2.Verify(a.Sign(tok), "h_a"); err != nil {
		t.Fatalf("same key rejected: %v", err)
	}
	if _, err := d2.Verify(d1.Sign(tok), "h_a"); err != nil {
		t.Fatalf("per-process default key rejected: %v", err)
	}
	if _, err := a.Verify(d1.Sign(tok), "h_a"); !isRestarted(err) {
		t.Fatalf("default key accepted by explicit key: %v", err)
	}
	// A token of our key with a wrong MAC is tampered, not foreign.
	s := a.Sign(tok)
	payload, mac, _ := strings.Cut(s, ".")
	if _, err := a.Verify(payload+"."+strings.Repeat("A", len(mac)), "h_a"); !isInvalidToken(err) {
		t.Fatalf("forged MAC: %v", err)
	}
}

func isRestarted(err error) bool {
	return errors.Is(err, qerr.ErrExpired) && qerr.Code(err) == qerr.CodeHandleExpired &&
		strings.Contains(qerr.As(err).Hint, "re-run") && strings.Contains(err.Error(), "restarted")
}

func TestTokenTamperEveryByte(t *testing.T) {
	r := handles.New[*val](handles.Options{})
	tok := r.Sign(handles.Token{Handle: "h_abcdefghijklmnopqrstuvwxyz", Offset: 1000, Size: 100, Format: "json"})
	alphabet := "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/ \n\x00\xff"
	for i := 0; i < len(tok); i++ {
		for j := 0; j < len(alphabet); j++ {
			if alphabet[j] == tok[i] {
				continue
			}
			bad := tok[:i] + string(alphabet[j]) + tok[i+1:]
			if _, err := r.Verify(bad, "h_abcdefghijklmnopqrstuvwxyz"); !isInvalidToken(err) {
				t.Fatalf("byte %d -> %q accepted: %v", i, alphabet[j], err)
			}
		}
		// deletion and insertion
		if _, err := r.Verify(tok[:i]+tok[i+1:], "h_abcdefghijklmnopqrstuvwxyz"); !isInvalidToken(err) {
			t.Fatalf("deleting byte %d accepted", i)
		}
		if _, err := r.Verify(tok[:i]+"A"+tok[i:], "h_abcdefghijklmnopqrstuvwxyz"); !isInvalidToken(err) {
			t.Fatalf("inserting at %d accepted", i)
		}
	}
}

func TestTokenInvalid(t *testing.T) {
	r := handles.New[*val](handles.Options{})
	good := r.Sign(handles.Token{Handle: "h_a", Offset: 5, Size: 5, Format: "csv"})
	payload, mac, _ := strings.Cut(good, ".")
	other := r.Sign(handles.Token{Handle: "h_b", Offset: 5, Size: 5, Format: "csv"})
	otherPayload, _, _ := strings.Cut(other, ".")
	tests := []struct {
		name, token, handle string
	}{
		{"empty", "", "h_a"},
		{"other handle", other, "h_a"},
		{"spliced payload", otherPayload + "." + mac, "h_a"},
		{"no dot", payload + mac, "h_a"},
		{"two dots", good + ".", "h_a"},
		{"payload only", payload, "h_a"},
		{"payload dot", payload + ".", "h_a"},
		{"mac only", "." + mac, "h_a"},
		{"truncated mac", good[:len(good)-3], "h_a"},
		{"truncated payload", payload[:len(payload)-2] + "." + mac, "h_a"},
		{"padded", payload + "==." + mac, "h_a"},
		{"std base64", strings.NewReplacer("-", "+", "_", "/").Replace(good) + "+/", "h_a"},
		{"huge", strings.Repeat("A", 1<<20) + "." + mac, "h_a"},
		{"newline", payload + "\n." + mac, "h_a"},
		{"garbage", "\xff\xfe\x00", "h_a"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.Verify(tc.token, tc.handle)
			if !isInvalidToken(err) {
				t.Fatalf("err = %v, want invalid_page_token", err)
			}
			if qerr.As(err).Hint == "" {
				t.Fatal("no hint")
			}
		})
	}
}

func FuzzVerify(f *testing.F) {
	r := handles.New[*val](handles.Options{Key: []byte("fuzz-key")})
	f.Add(r.Sign(handles.Token{Handle: "h_a", Offset: 1, Size: 2, Format: "json"}), "h_a")
	f.Add(r.Sign(handles.Token{}), "")
	f.Add(handles.New[*val](handles.Options{Key: []byte("other-key")}).Sign(handles.Token{Handle: "h_a", Size: 2}), "h_a")
	f.Add("", "")
	f.Add(".", "h_a")
	f.Add("AQIEA2hfYQRqc29u.", "h_a")
	f.Add("a.b.c", "x")
	f.Fuzz(func(t *testing.T, token, handle string) {
		tok, err := r.Verify(token, handle)
		if err != nil {
			if !isInvalidToken(err) && !isRestarted(err) {
				t.Fatalf("wrong error kind: %v", err)
			}
			return
		}
		if handle != "" && tok.Handle != handle {
			t.Fatalf("accepted token for %q as %q", tok.Handle, handle)
		}
		// Anything accepted is canonical: re-signing reproduces it.
		if s := r.Sign(tok); s != token {
			t.Fatalf("accepted non-canonical token %q (canonical %q)", token, s)
		}
		// And any token signed from fuzzed content round-trips.
		t2 := handles.Token{Handle: handle, Offset: int64(len(token)), Size: -1, Format: token}
		if s := r.Sign(t2); len(s) <= handles.MaxTokenLen {
			if got, err := r.Verify(s, handle); err != nil || got != t2 {
				t.Fatalf("round trip %+v: %+v %v", t2, got, err)
			}
		}
	})
}
