package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// selfSignedTLS makes a server TLS config with a throw-away certificate.
func selfSignedTLS() *tls.Config {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "localhost"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		panic(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, MinVersion: tls.VersionTLS12}
}

func TestTLSNegotiation(t *testing.T) {
	ts := startServer(t, Config{TLS: selfSignedTLS()}, nil)
	c, err := pgconn.Connect(testContext(t), ts.connString("")[:len(ts.connString(""))-len("disable")]+"require")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	if _, ok := c.Conn().(*tls.Conn); !ok {
		t.Fatalf("connection is %T", c.Conn())
	}
	if err := c.Exec(testContext(t), "select 1").Close(); err != nil {
		t.Fatal(err)
	}
	// The cleanup's Shutdown then ends this idle TLS connection.
}
