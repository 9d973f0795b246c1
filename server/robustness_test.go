package server

import (
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestBadInput sends broken streams on one connection each while another
// client keeps working: each bad client gets an error or a close, nothing
// else is disturbed.
func TestBadInput(t *testing.T) {
	ts := startServer(t, Config{MaxMessageSize: 1 << 20, StartupTimeout: 200 * time.Millisecond}, nil)
	bystander := ts.connect(t, pgx.QueryExecModeCacheStatement)

	// hasFatal reports whether the server's last words were a FATAL with
	// the given SQLSTATE.
	hasFatal := func(got []string, code string) bool {
		return len(got) > 0 && strings.HasPrefix(got[len(got)-1], "ErrorResponse FATAL "+code)
	}
	for _, tc := range []struct {
		name    string
		startup bool
		send    func(rc *rawConn)
		check   func(t *testing.T, got []string)
	}{
		{"random bytes before startup", false, func(rc *rawConn) {
			rc.nc.Write(randomBytes(1, 4096))
		}, nil},
		{"random bytes after startup", true, func(rc *rawConn) {
			rc.nc.Write(randomBytes(2, 4096))
		}, nil},
		{"startup packet too long", false, func(rc *rawConn) {
			rc.nc.Write([]byte{0x40, 0, 0, 0, 0, 3, 0, 0})
		}, func(t *testing.T, got []string) {
			if !slices.Equal(got, []string{"ErrorResponse FATAL 08P01 invalid length of startup packet"}) {
				t.Errorf("got %q", got)
			}
		}},
		{"startup packet without terminator", false, func(rc *rawConn) {
			rc.nc.Write([]byte{0, 0, 0, 13, 0, 3, 0, 0, 'u', 's', 'e', 'r', 0})
		}, func(t *testing.T, got []string) {
			if !hasFatal(got, "08P01") {
				t.Errorf("got %q", got)
			}
		}},
		{"silent client times out in startup", false, func(rc *rawConn) {}, nil},
		{"truncated message", true, func(rc *rawConn) {
			rc.nc.Write([]byte{'Q', 0, 0, 0, 100, 's', 'e', 'l'})
			rc.nc.(*net.TCPConn).CloseWrite()
		}, func(t *testing.T, got []string) {
			if !hasFatal(got, "08P01") {
				t.Errorf("got %q", got)
			}
		}},
		{"unknown message type", true, func(rc *rawConn) {
			rc.nc.Write([]byte{'z', 0, 0, 0, 4})
		}, func(t *testing.T, got []string) {
			if !slices.Equal(got, []string{"ErrorResponse FATAL 08P01 invalid frontend message: unknown message type: z"}) {
				t.Errorf("got %q", got)
			}
		}},
		{"length below 4", true, func(rc *rawConn) {
			rc.nc.Write([]byte{'Q', 0, 0, 0, 2})
		}, func(t *testing.T, got []string) {
			if !hasFatal(got, "08P01") {
				t.Errorf("got %q", got)
			}
		}},
		{"1 GB length prefix", true, func(rc *rawConn) {
			rc.nc.Write([]byte{'Q', 0x40, 0, 0, 0})
		}, func(t *testing.T, got []string) {
			want := "ErrorResponse FATAL 08P01 invalid message length: 1073741820 bytes exceeds the limit of 1048576 bytes"
			if !slices.Equal(got, []string{want}) {
				t.Errorf("got %q", got)
			}
		}},
		{"malformed Bind body", true, func(rc *rawConn) {
			rc.nc.Write([]byte{'B', 0, 0, 0, 6, 0, 0})
		}, func(t *testing.T, got []string) {
			if !hasFatal(got, "08P01") {
				t.Errorf("got %q", got)
			}
		}},
		{"password message after startup", true, func(rc *rawConn) {
			rc.nc.Write([]byte{'p', 0, 0, 0, 6, 'x', 0})
		}, func(t *testing.T, got []string) {
			if !hasFatal(got, "08P01") {
				t.Errorf("got %q", got)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var rc *rawConn
			if tc.startup {
				rc = ts.rawStartup(t)
			} else {
				rc = ts.dialRaw(t)
			}
			tc.send(rc)
			got := rc.readUntilClosed()
			if tc.check != nil {
				tc.check(t, got)
			}
			checkAlive(t, bystander)
		})
	}

	t.Run("10 MB query over a 1 MiB limit", func(t *testing.T) {
		conn := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
		// Under the limit works.
		big := strings.Repeat("x", 512<<10)
		if v := mustQueryValue(t, conn, "select '"+big+"'"); v != big {
			t.Fatal("512 KiB value mangled")
		}
		// Over it ends this connection only. The client may see the
		// FATAL or a reset, depending on how much it had written when the
		// server closed.
		_, err := conn.Exec(testContext(t), "select '"+strings.Repeat("x", 10<<20)+"'")
		if err == nil {
			t.Fatal("10 MB query accepted")
		}
		if code := pgCode(err); code != "" && code != "08P01" {
			t.Fatalf("got %v", err)
		}
		checkAlive(t, bystander)
	})
}

func randomBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// TestRandomStreams feeds mutated valid client streams into connections
// over net.Pipe; a failing seed is printed so it can be replayed.
func TestRandomStreams(t *testing.T) {
	seeds := fuzzSeeds()
	for i := range 300 {
		seed := uint64(i)
		r := rand.New(rand.NewPCG(seed, 7))
		data := slices.Clone(seeds[r.IntN(len(seeds))])
		for range r.IntN(8) {
			if len(data) == 0 {
				break
			}
			switch r.IntN(3) {
			case 0:
				data[r.IntN(len(data))] = byte(r.Uint32())
			case 1:
				data = data[:r.IntN(len(data))]
			case 2:
				j := r.IntN(len(data))
				data = slices.Insert(data, j, byte(r.Uint32()))
			}
		}
		if !runStream(t, true, data) {
			t.Fatalf("seed %d: connection did not end for input %q", seed, data)
		}
	}
}
