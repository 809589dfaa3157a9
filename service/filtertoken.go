package service

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// Filter token limits.
const (
	// FilterTokenTTL is how long a pattern_filter token stays valid.
	FilterTokenTTL = time.Hour
	// MaxFilterTokenValues is the most values one token's in-list holds.
	MaxFilterTokenValues = 5000
	// maxFilterTokenLen bounds the token strings Verify decodes.
	maxFilterTokenLen = 1 << 20
	filterTokenPrefix = "ft1."
	filterTokenDomain = "quarry/filter-token/v1\x00"
)

// filterClaims is the signed content of a filter token: the filter
// {col, op: in, value} and where and until when it applies.
type filterClaims struct {
	Datasets []string `json:"d"`
	Col      string   `json:"c"`
	Op       string   `json:"o"`
	Values   []string `json:"v"`
	Expires  int64    `json:"e"` // unix seconds
}

// filterKeys holds the HMAC key of filter tokens: random per Service, so
// tokens do not outlive the server process (like page tokens), unless
// Config.SigningKey shares one key between replicas.
type filterKeys struct{ key []byte }

// newFilterKeys signs with key, or with a random key when key is nil.
func newFilterKeys(key []byte) filterKeys {
	if key != nil {
		return filterKeys{key: key}
	}
	k := make([]byte, 32)
	_, _ = rand.Read(k) // never fails (crypto/rand.Read crashes instead)
	return filterKeys{key: k}
}

func (k filterKeys) mac(p []byte) []byte {
	m := hmac.New(sha256.New, k.key)
	m.Write([]byte(filterTokenDomain))
	m.Write(p)
	return m.Sum(nil)
}

// sign returns c as an opaque token: "ft1." + base64url(JSON) + "." +
// base64url(HMAC-SHA256).
func (k filterKeys) sign(c filterClaims) (string, error) {
	p, err := json.Marshal(c)
	if err != nil {
		return "", qerr.Internal(err, "encoding a filter token")
	}
	return filterTokenPrefix + base64.RawURLEncoding.EncodeToString(p) + "." + base64.RawURLEncoding.EncodeToString(k.mac(p)), nil
}

// verify checks a token's signature and expiry and returns its claims.
func (k filterKeys) verify(token string, now time.Time) (filterClaims, error) {
	var c filterClaims
	if len(token) > maxFilterTokenLen {
		return c, invalidFilterToken("the filter token is too long")
	}
	body, ok := strings.CutPrefix(token, filterTokenPrefix)
	enc, sig, ok2 := strings.Cut(body, ".")
	if !ok || !ok2 {
		return c, invalidFilterToken("the filter token is malformed")
	}
	p, err := base64.RawURLEncoding.Strict().DecodeString(enc)
	if err != nil {
		return c, invalidFilterToken("the filter token is malformed")
	}
	m, err := base64.RawURLEncoding.Strict().DecodeString(sig)
	if err != nil || !hmac.Equal(m, k.mac(p)) {
		return c, invalidFilterToken("the filter token was not issued by this server (or before it restarted) or was modified")
	}
	if err := json.Unmarshal(p, &c); err != nil || c.Col == "" || c.Op != "in" {
		return c, invalidFilterToken("the filter token is malformed")
	}
	if now.Unix() > c.Expires {
		return c, invalidFilterToken("the filter token expired at " + time.Unix(c.Expires, 0).UTC().Format(time.RFC3339))
	}
	return c, nil
}

func invalidFilterToken(reason string) error {
	return qerr.Invalid(qerr.CodeInvalidFilterToken, "invalid filter token: %s", reason).With("field", "filters").
		WithHint("pass the filter_token exactly as pattern_filter returned it, on a dataset it was confirmed for; or call pattern_filter again for a fresh one")
}

// filter is the filter a token stands for.
func (c filterClaims) filter() planner.FilterSpec {
	v, _ := json.Marshal(c.Values) // strings always encode
	return planner.FilterSpec{Col: c.Col, Op: planner.Op(c.Op), Value: v}
}

// resolveFilterTokens replaces every {"filter_token": ...} of spec.Filters
// by the filter it stands for, after checking that dataset is one the
// token was confirmed for. spec is not modified; without tokens it is
// returned as is.
func (s *Service) resolveFilterTokens(dataset string, spec planner.Spec) (planner.Spec, error) {
	if !slices.ContainsFunc(spec.Filters, func(f planner.FilterSpec) bool { return f.FilterToken != "" }) {
		return spec, nil
	}
	filters := make([]planner.FilterSpec, len(spec.Filters))
	for i, f := range spec.Filters {
		if f.FilterToken == "" {
			filters[i] = f
			continue
		}
		if f.Col != "" || f.Op != "" || f.Value != nil || f.Any != nil || f.Expr != "" {
			return spec, qerr.Invalid(qerr.CodeInvalidFilter, "filters[%d]: filter_token stands alone: omit col, op, value, any and expr", i).
				With("field", "filters")
		}
		c, err := s.filterKeys.verify(f.FilterToken, time.Now())
		if err != nil {
			return spec, err
		}
		if !slices.Contains(c.Datasets, dataset) {
			return spec, invalidFilterToken("it was confirmed for " + strings.Join(c.Datasets, ", ") + ", not for " + dataset)
		}
		filters[i] = c.filter()
	}
	spec.Filters = filters
	return spec, nil
}
