package node

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/cluster/raft"
)

// writeTLSFiles makes a CA and a certificate it signs for 127.0.0.1, usable
// as server and client, and writes them to dir.
func writeTLSFiles(t *testing.T, dir string) *raft.TLSFiles {
	t.Helper()
	key := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	caKey := key()
	ca := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	nodeKey := key()
	leaf := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "node"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, ca, &nodeKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(nodeKey)
	if err != nil {
		t.Fatal(err)
	}
	return &raft.TLSFiles{
		CAFile:   write("ca.crt", "CERTIFICATE", caDER),
		CertFile: write("node.crt", "CERTIFICATE", leafDER),
		KeyFile:  write("node.key", "EC PRIVATE KEY", keyDER),
	}
}

// Nodes with certificates from one CA form a cluster over mutual TLS (the
// cluster RPC and Raft); a node without TLS, or with another CA's
// certificate, gets nowhere; a non-loopback address without TLS is refused.
func TestMutualTLS(t *testing.T) {
	ctx := testCtx(t)
	files := writeTLSFiles(t, t.TempDir())
	nodes := newTestNodes(t, 2)
	for _, n := range nodes {
		n.cfg.TLS = files
	}
	startAll(t, ctx, nodes)
	waitMeta(t, ctx, nodes[0].n, []uint64{1, 2}, nil)

	plain := newTestNodes(t, 1)[0]
	plain.cfg.Join = []string{nodes[0].cfg.Addr}
	other := newTestNodes(t, 1)[0]
	other.cfg.Join = []string{nodes[0].cfg.Addr}
	other.cfg.TLS = writeTLSFiles(t, t.TempDir())
	for _, n := range []*testNode{plain, other} {
		short, cancel := context.WithTimeout(context.Background(), time.Second)
		err := n.start(short, t)
		cancel()
		if err == nil {
			t.Fatal("a node without the cluster's CA joined")
		}
	}

	bad := Config{DataDir: t.TempDir(), Addr: "10.1.2.3:7000", RaftAddr: "127.0.0.1:7001"}
	if _, err := Start(ctx, bad); err == nil || !strings.Contains(err.Error(), "mutual TLS") {
		t.Fatalf("non-loopback address without TLS: %v", err)
	}
}
