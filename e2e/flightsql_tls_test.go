package e2e

import (
	"crypto/tls"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql/driver"

	"github.com/quarrydb/quarry/internal/tlstest"
)

// TestFlightSQLTLS: serve --flightsql-tls-cert/--flightsql-tls-key puts
// the Flight SQL facade behind TLS: arrow-go's database/sql driver trusting
// the (generated, self-signed) certificate runs a query; a plaintext
// connection is refused.
func TestFlightSQLTLS(t *testing.T) {
	cert, key, roots := tlstest.SelfSigned(t, t.TempDir())
	root, _ := copyDemo(t, "weather/stations")
	faddr := freeAddr(t)
	startHTTP(t, "--data", root, "--flightsql-addr", faddr, "--flightsql-tls-cert", cert, "--flightsql-tls-key", key)
	name := "quarry-e2e-" + filepath.Base(t.TempDir())
	if err := driver.RegisterTLSConfig(name, &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = driver.UnregisterTLSConfig(name) })

	db, err := sql.Open("flightsql", "flightsql://"+faddr+"?timeout=60s&tls="+name)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := flightRows(db, `SELECT count(*) FROM "weather/stations"`)
	if err != nil || len(rows) != 1 || rows[0][0] == nil || *rows[0][0] != "40" {
		t.Fatalf("over TLS: %v %v", rows, err)
	}
	plain, err := sql.Open("flightsql", "flightsql://"+faddr+"?timeout=10s")
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if _, err := flightRows(plain, "SELECT 1"); err == nil || !strings.Contains(strings.ToLower(err.Error()), "unavailable") {
		t.Fatalf("plaintext against TLS: %v", err)
	}
}
