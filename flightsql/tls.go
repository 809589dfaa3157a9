package flightsql

import (
	"crypto/tls"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// tlsOption loads the certificate and key (PEM files) the facade serves
// TLS with (TLS 1.2 or later); none => no option (plaintext).
func tlsOption(certFile, keyFile string) ([]grpc.ServerOption, error) {
	if certFile == "" && keyFile == "" {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("--flightsql-tls-cert/--flightsql-tls-key: %w", err)
	}
	return []grpc.ServerOption{grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}))}, nil
}
