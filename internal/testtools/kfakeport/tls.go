package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"

	"github.com/kdissect/kdissect/internal/testtools/traffic"
)

// serverTLS is the broker's TLS config, and writes what a client needs to
// dir.
func serverTLS(dir string) (*tls.Config, error) {
	c, err := traffic.TestCerts()
	if err != nil {
		return nil, err
	}
	key, err := x509.MarshalPKCS8PrivateKey(c.Client.PrivateKey)
	if err != nil {
		return nil, err
	}
	for name, b := range map[string]*pem.Block{
		"ca.pem":         {Type: "CERTIFICATE", Bytes: c.CA.Raw},
		"client.pem":     {Type: "CERTIFICATE", Bytes: c.Client.Certificate[0]},
		"client-key.pem": {Type: "PRIVATE KEY", Bytes: key},
	} {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(b), 0o600); err != nil {
			return nil, err
		}
	}
	return &tls.Config{Certificates: []tls.Certificate{c.Server}, ClientCAs: c.Pool, ClientAuth: tls.VerifyClientCertIfGiven}, nil
}
