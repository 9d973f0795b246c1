package server

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/pivotdb/pivotdb/sql/auth"
)

// encodeFrontend encodes client messages as they appear on the wire.
func encodeFrontend(msgs ...pgproto3.FrontendMessage) []byte {
	var buf bytes.Buffer
	fe := pgproto3.NewFrontend(nil, &buf)
	for _, m := range msgs {
		fe.Send(m)
	}
	if err := fe.Flush(); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

var fuzzStartup = encodeFrontend(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber,
	Parameters: map[string]string{"user": "pivotdb"}})

// fuzzSeeds are client streams (after startup) that exercise every message.
func fuzzSeeds() [][]byte {
	return [][]byte{
		encodeFrontend(&pgproto3.Query{String: "select 1; select 'a' as b"}),
		encodeFrontend(&pgproto3.Query{String: "begin; select 1/0"}, &pgproto3.Query{String: "rollback"}),
		encodeFrontend(
			&pgproto3.Parse{Name: "s", Query: "select $1::int8, $2", ParameterOIDs: []uint32{20}},
			&pgproto3.Describe{ObjectType: 'S', Name: "s"},
			&pgproto3.Bind{PreparedStatement: "s", ParameterFormatCodes: []int16{1, 0},
				Parameters: [][]byte{{0, 0, 0, 0, 0, 0, 0, 1}, []byte("x")}, ResultFormatCodes: []int16{1}},
			&pgproto3.Describe{ObjectType: 'P'},
			&pgproto3.Execute{MaxRows: 1},
			&pgproto3.Close{ObjectType: 'S', Name: "s"},
			&pgproto3.Sync{},
		),
		encodeFrontend(
			&pgproto3.Parse{Query: "select generate_series(1, 5)"},
			&pgproto3.Bind{DestinationPortal: "p"},
			&pgproto3.Execute{Portal: "p", MaxRows: 2},
			&pgproto3.Flush{},
			&pgproto3.Execute{Portal: "p"},
			&pgproto3.Close{ObjectType: 'P', Name: "p"},
			&pgproto3.Sync{},
			&pgproto3.Terminate{},
		),
		encodeFrontend(
			&pgproto3.Parse{Query: "select $1::numeric"},
			&pgproto3.Bind{ParameterFormatCodes: []int16{1}, Parameters: [][]byte{{0, 1, 0, 0, 0, 0, 0, 0, 0, 7}}},
			&pgproto3.Execute{},
			&pgproto3.Sync{},
		),
		{'z', 0, 0, 0, 4},
		{'Q', 0x7f, 0xff, 0xff, 0xff},
	}
}

// runStream runs one connection over net.Pipe with data as everything the
// client sends, and reports whether the connection ended. The client side
// drains the server's output so the server never blocks writing.
func runStream(t testing.TB, withStartup bool, data []byte) bool {
	return runStreamConfig(t, Config{}, withStartup, data)
}

// runStreamConfig is runStream on a server with cfg's TLS, Auth and
// Passwords.
func runStreamConfig(t testing.TB, cfg Config, withStartup bool, data []byte) bool {
	fake := newFakeEngine()
	fake.noSleep = true // nothing may outlive the client
	cfg.MaxMessageSize = 1 << 16
	cfg.StartupTimeout = testTimeout
	cfg.Logger = slog.New(slog.DiscardHandler)
	s := New(cfg, fake)
	client, srv := net.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.serveConn(context.Background(), srv)
	}()
	go io.Copy(io.Discard, client)
	if withStartup {
		client.Write(fuzzStartup)
	}
	client.Write(data)
	client.Close()
	select {
	case <-done:
	case <-time.After(testTimeout):
		return false
	}
	if n := fake.openResults.Load(); n != 0 {
		t.Fatalf("%d results left open for input %q", n, data)
	}
	if n := fake.openSessions.Load(); n != 0 {
		t.Fatalf("%d sessions left open for input %q", n, data)
	}
	fake.checkViolations(t)
	return true
}

// FuzzConn feeds arbitrary bytes to a connection as its client stream,
// optionally after a valid startup packet. The connection must end without
// a panic escaping, a hang, or a leaked session or result.
func FuzzConn(f *testing.F) {
	for _, seed := range fuzzSeeds() {
		f.Add(true, seed)
	}
	f.Add(false, fuzzStartup)
	f.Add(false, []byte{0, 0, 0, 8, 4, 0xd2, 0x16, 0x2f})
	f.Fuzz(func(t *testing.T, withStartup bool, data []byte) {
		if !runStream(t, withStartup, data) {
			t.Fatalf("connection did not end for input %q", data)
		}
	})
}

// fuzzAuthConfig is a server with TLS and SCRAM, so that FuzzStartup
// reaches every branch of the handshake.
var fuzzAuthConfig = sync.OnceValue(func() Config {
	v, err := auth.HashPassword("pw")
	if err != nil {
		panic(err)
	}
	return Config{TLS: selfSignedTLS(), Auth: AuthSCRAM, Passwords: passwordMap{"pivotdb": v}}
})

func startupSeeds() [][]byte {
	sslReq := []byte{0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f}
	gssReq := []byte{0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x30}
	cancel := encodeFrontend(&pgproto3.CancelRequest{ProcessID: 1, SecretKey: []byte{1, 2, 3, 4}})
	first := encodeFrontend(&pgproto3.SASLInitialResponse{AuthMechanism: "SCRAM-SHA-256", Data: []byte("n,,n=,r=abcdef")})
	final := encodeFrontend(&pgproto3.SASLResponse{Data: []byte("c=biws,r=abcdef,p=AAAA")})
	cat := func(parts ...[]byte) []byte {
		var out []byte
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	return [][]byte{
		fuzzStartup,
		cat(fuzzStartup, first, final),
		cat(fuzzStartup, first, encodeFrontend(&pgproto3.Query{String: "select 1"})),
		cat(fuzzStartup, encodeFrontend(&pgproto3.PasswordMessage{Password: "pw"})),
		cat(sslReq, fuzzStartup),
		cat(sslReq, []byte{0x16, 3, 1, 0, 5, 1, 0, 0, 1, 0}),
		cat(gssReq, sslReq, fuzzStartup, first),
		cat(gssReq, gssReq),
		cancel,
		encodeFrontend(&pgproto3.StartupMessage{ProtocolVersion: 3<<16 | 2,
			Parameters: map[string]string{"user": "pivotdb", "_pq_.x": "1", "options": "-c statement_timeout=5"}}),
	}
}

// FuzzStartup feeds arbitrary bytes as everything a client sends from the
// first byte on, to a server with TLS and SCRAM authentication: encryption
// requests, CancelRequest, the startup packet and the SASL exchange. The
// connection must end without a panic, a hang or a leak, and nothing may
// log in without the password.
func FuzzStartup(f *testing.F) {
	for _, seed := range startupSeeds() {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !runStreamConfig(t, fuzzAuthConfig(), false, data) {
			t.Fatalf("connection did not end for input %q", data)
		}
	})
}
