package flightsrc

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"
	"time"

	toml "github.com/pelletier/go-toml/v2"

	"github.com/quarrydb/quarry/planner/sqlgen"
)

// ConfigKey is the config file's array of tables that declares remotes:
// one [[flightsql]] table per remote.
const ConfigKey = "flightsql"

// DefaultTimeout bounds each call to a remote but the reading of a query's
// stream (which the query timeout bounds).
const DefaultTimeout = 30 * time.Second

// Config is one [[flightsql]] table of the config file: a remote whose
// tables the catalog lists as remote/<Name>/<table>. Secrets are never
// inline: they are read from a file or an environment variable when the
// remote is opened.
type Config struct {
	// Name names the remote in dataset ids (letters, digits, '_', '-', '.').
	Name string `toml:"name,omitempty"`
	// URI is grpc://host:port (or grpc+tcp://) for plaintext,
	// grpc+tls://host:port for TLS.
	URI string `toml:"uri,omitempty"`
	// TokenFile or TokenEnv hold a bearer token (sent as "authorization:
	// Bearer <token>").
	TokenFile string `toml:"token_file,omitempty"`
	TokenEnv  string `toml:"token_env,omitempty"`
	// User with PasswordFile or PasswordEnv: basic auth (sent as
	// "authorization: Basic ..." on every call).
	User         string `toml:"user,omitempty"`
	PasswordFile string `toml:"password_file,omitempty"`
	PasswordEnv  string `toml:"password_env,omitempty"`
	// Headers are extra gRPC metadata sent on every call (e.g. a
	// database or tenant header some engines want).
	Headers map[string]string `toml:"headers,omitempty"`
	// CAFile verifies the server (grpc+tls; default: the system roots);
	// CertFile and KeyFile are the client certificate for mutual TLS;
	// ServerName overrides the name the certificate is checked against.
	CAFile     string `toml:"ca_file,omitempty"`
	CertFile   string `toml:"cert_file,omitempty"`
	KeyFile    string `toml:"key_file,omitempty"`
	ServerName string `toml:"server_name,omitempty"`
	// Timeout bounds every call but the reading of a query's rows
	// ("30s" by default).
	Timeout Duration `toml:"timeout,omitempty"`
	// Allow lists the tables to show, as globs over "schema.table" (or
	// "table" when the remote has no schemas; '*' matches any run of
	// characters, '?' one); empty shows every table and view.
	Allow []string `toml:"allow,omitempty"`
	// Dialect is the remote's SQL spelling: "postgres" (default) or "mysql".
	Dialect string `toml:"dialect,omitempty"`
	// CountRows counts each table's rows with SELECT count(*) when the
	// catalog lists it (default true); false leaves counts unknown
	// (flagged as not exact).
	CountRows *bool `toml:"count_rows,omitempty"`
	// FloatSums pushes sum and avg of float64 columns to the remote
	// (default false: Quarry computes them, exactly on decimal data; the
	// remote adds doubles in its own order, so the last digits may differ).
	FloatSums bool `toml:"float_sums,omitempty"`
}

// Duration is a time.Duration written as a string ("30s", "2m").
type Duration time.Duration

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// MarshalText implements encoding.TextMarshaler.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// ParseConfig returns the [[flightsql]] tables of a TOML config file
// (nil when it has none). Unknown keys, a flightsql key that is not an
// array of tables and invalid settings are errors naming the file.
func ParseConfig(file string, data []byte) ([]Config, error) {
	var doc map[string]any
	if err := toml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	raw, ok := doc[ConfigKey]
	if !ok {
		return nil, nil
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, fmt.Errorf("%s: %s must be an array of tables: write each remote as [[%s]]", file, ConfigKey, ConfigKey)
	}
	out := make([]Config, 0, len(list))
	for i, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: [[%s]] #%d is not a table", file, ConfigKey, i+1)
		}
		b, err := toml.Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("%s: [[%s]] #%d: %v", file, ConfigKey, i+1, err)
		}
		var c Config
		dec := toml.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			var sm *toml.StrictMissingError
			if errors.As(err, &sm) {
				return nil, fmt.Errorf("%s: [[%s]] #%d: unknown key(s): %s (known: name, uri, token_file, token_env, user, password_file, password_env, headers, ca_file, cert_file, key_file, server_name, timeout, allow, dialect, count_rows, float_sums)",
					file, ConfigKey, i+1, strings.TrimSpace(sm.String()))
			}
			return nil, fmt.Errorf("%s: [[%s]] #%d: %v", file, ConfigKey, i+1, err)
		}
		out = append(out, c)
	}
	if err := Validate(out); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return out, nil
}

// Validate checks a list of remotes: names unique and well formed, URIs,
// one way to authenticate, TLS files only with grpc+tls, globs, dialects.
func Validate(list []Config) error {
	seen := map[string]bool{}
	for i, c := range list {
		where := fmt.Sprintf("[[%s]] #%d", ConfigKey, i+1)
		if c.Name != "" {
			where += " (" + c.Name + ")"
		}
		if err := c.validate(); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		if seen[c.Name] {
			return fmt.Errorf("%s: the name %q is used twice", where, c.Name)
		}
		seen[c.Name] = true
	}
	return nil
}

func (c Config) validate() error {
	if !nameRE.MatchString(c.Name) {
		return fmt.Errorf("name %q: use 1-64 letters, digits, '_', '-' or '.'", c.Name)
	}
	if _, _, err := c.target(); err != nil {
		return err
	}
	tls := strings.HasPrefix(c.URI, "grpc+tls://")
	if !tls && (c.CAFile != "" || c.CertFile != "" || c.KeyFile != "" || c.ServerName != "") {
		return errors.New("ca_file, cert_file, key_file and server_name need a grpc+tls:// uri")
	}
	if (c.CertFile == "") != (c.KeyFile == "") {
		return errors.New("cert_file and key_file go together (mutual TLS)")
	}
	ways := 0
	for _, s := range []string{c.TokenFile, c.TokenEnv, c.User} {
		if s != "" {
			ways++
		}
	}
	if ways > 1 || c.TokenFile != "" && c.TokenEnv != "" {
		return errors.New("set one of token_file, token_env or user (with password_file or password_env)")
	}
	if c.User != "" && (c.PasswordFile == "") == (c.PasswordEnv == "") {
		return errors.New("user needs exactly one of password_file or password_env")
	}
	if c.User == "" && (c.PasswordFile != "" || c.PasswordEnv != "") {
		return errors.New("password_file and password_env need user")
	}
	for k := range c.Headers {
		if strings.EqualFold(k, "authorization") {
			return errors.New("headers: set authorization with token_file, token_env or user, not inline")
		}
	}
	if c.Timeout < 0 {
		return errors.New("timeout must be positive")
	}
	if _, err := sqlgen.DialectNamed(c.Dialect); err != nil {
		return err
	}
	if _, err := allowRE(c.Allow); err != nil {
		return err
	}
	return nil
}

// target is the gRPC address and whether it uses TLS.
func (c Config) target() (addr string, tls bool, err error) {
	u, err := url.Parse(c.URI)
	if err != nil {
		return "", false, fmt.Errorf("uri %q: %v", c.URI, err)
	}
	switch u.Scheme {
	case "grpc", "grpc+tcp":
	case "grpc+tls":
		tls = true
	default:
		return "", false, fmt.Errorf("uri %q: the scheme must be grpc://, grpc+tcp:// or grpc+tls://", c.URI)
	}
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.User != nil {
		return "", false, fmt.Errorf("uri %q: give only scheme://host:port", c.URI)
	}
	if _, _, err := net.SplitHostPort(u.Host); err != nil {
		return "", false, fmt.Errorf("uri %q: host:port expected: %v", c.URI, err)
	}
	return u.Host, tls, nil
}

// timeout is Timeout or DefaultTimeout.
func (c Config) timeout() time.Duration {
	if c.Timeout > 0 {
		return time.Duration(c.Timeout)
	}
	return DefaultTimeout
}

// countRows is CountRows, true by default.
func (c Config) countRows() bool { return c.CountRows == nil || *c.CountRows }

// allowRE compiles the allow globs into one anchored expression (nil:
// allow everything).
func allowRE(globs []string) (*regexp.Regexp, error) {
	if len(globs) == 0 {
		return nil, nil
	}
	parts := make([]string, len(globs))
	for i, g := range globs {
		if g == "" {
			return nil, errors.New("allow: an empty pattern")
		}
		var b strings.Builder
		for _, r := range g {
			switch r {
			case '*':
				b.WriteString(".*")
			case '?':
				b.WriteString(".")
			default:
				b.WriteString(regexp.QuoteMeta(string(r)))
			}
		}
		parts[i] = b.String()
	}
	return regexp.Compile(`^(?:` + strings.Join(parts, "|") + `)$`)
}
