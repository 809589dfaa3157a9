package flightsql_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"

	"github.com/quarrydb/quarry/flightsql"
	"github.com/quarrydb/quarry/internal/app"
	"github.com/quarrydb/quarry/internal/tlstest"
)

// TestTLS: with a certificate and key the facade speaks grpc+tls: arrow-go's
// client trusting the certificate runs a query; a plaintext client and a
// client that does not trust it are refused; a bad key file fails New.
func TestTLS(t *testing.T) {
	certFile, keyFile, pool := tlstest.SelfSigned(t, t.TempDir())
	f := startFacadeWith(t, app.Config{Data: demoRoot(t, "weather/stations")}, nil, func(o *flightsql.Options) {
		o.TLSCert, o.TLSKey = certFile, keyFile
	})
	ctx := context.Background()
	const q = `SELECT count(*) FROM "weather/stations"`

	c := f.client(t, "", grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12})))
	info, err := c.Execute(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if _, rows := readAll(t, ctx, c, info); len(rows) != 1 || rows[0][0] != "40" {
		t.Fatalf("rows over TLS: %v", rows)
	}

	plain := f.client(t, "")
	if _, err := plain.Execute(ctx, q); codeOf(err) != codes.Unavailable {
		t.Errorf("plaintext client against TLS: %v, want UNAVAILABLE", err)
	}
	untrusting := f.client(t, "", grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: x509.NewCertPool(), MinVersion: tls.VersionTLS12})))
	if _, err := untrusting.Execute(ctx, q); codeOf(err) != codes.Unavailable || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("client not trusting the certificate: %v", err)
	}

	if _, err := flightsql.New(flightsql.Options{Addr: "127.0.0.1:0", Service: f.app.Service, TLSCert: certFile, TLSKey: certFile}); err == nil ||
		!strings.Contains(err.Error(), "--flightsql-tls-cert/--flightsql-tls-key") {
		t.Errorf("a certificate as its own key: %v", err)
	}
}

func TestFlagsCheck(t *testing.T) {
	for _, tc := range []struct {
		f    flightsql.Flags
		want string
	}{
		{flightsql.Flags{}, ""},
		{flightsql.Flags{Addr: "127.0.0.1:0"}, ""},
		{flightsql.Flags{Addr: "127.0.0.1:0", TLSCert: "c", TLSKey: "k"}, ""},
		{flightsql.Flags{Addr: "127.0.0.1:0", TLSCert: "c"}, "go together"},
		{flightsql.Flags{Addr: "127.0.0.1:0", TLSKey: "k"}, "go together"},
		{flightsql.Flags{TLSCert: "c", TLSKey: "k"}, "needs --flightsql-addr"},
	} {
		err := tc.f.Check()
		if (tc.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.f, err, tc.want)
		}
	}
}
