package tests

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestClusterGateway: SCRAM authentication, the client's address and a
// stopped serving node, through the nodes that forward SQL connections.
//
//   - With --auth scram on every node, the serving node authenticates
//     forwarded connections (their startup passes through): the right
//     password works through any node, a wrong one gets 28P01.
//   - Through a forwarding node, pg_stat_activity on the serving node
//     shows the client's own port (the PROXY header the forwarding node
//     sends); a PROXY header that is not signed with the cluster's key
//     ends the connection.
//   - A connection forwarded while the serving node is stopped (SIGSTOP:
//     the kernel still accepts its connections) does not hang: the
//     forwarding node gives up on it after a few seconds and hands the
//     connection to the node that serves next.
func TestClusterGateway(t *testing.T) {
	const password = "s3cret-pass"
	procs := newClusterProcs(t, 3)
	extra := []string{"--auth", "scram", "--initial-password", password}
	web := map[*clusterProc]string{}
	for i := len(procs) - 1; i >= 0; i-- {
		web[procs[i]] = freePort(t)
		startPlacementNode(procs[i], append(extra, "--http-listen", web[procs[i]])...)
	}
	ctx := ctxT(t)
	url := func(p *clusterProc, pw string) string {
		return fmt.Sprintf("postgres://pivotdb:%s@%s/pivotdb?sslmode=disable&connect_timeout=30", pw, p.sql)
	}
	connect := func(p *clusterProc) *pgx.Conn {
		t.Helper()
		deadline := time.Now().Add(90 * time.Second)
		for {
			c, err := pgx.Connect(ctx, url(p, password))
			if err == nil {
				if _, err = c.Exec(ctx, "SELECT 1"); err == nil {
					return c
				}
				c.Close(ctx)
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %s: %v\n%s", p.sql, err, p.log)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	for _, p := range procs {
		connect(p).Close(ctx)
	}
	serving := servingProc(t, procs)
	// Every node votes (stopping the serving node keeps a quorum).
	sc := connect(serving)
	waitSysNodes(t, sc, serving, threeNodesVoting)
	sc.Close(ctx)
	var fwd *clusterProc
	for _, p := range procs {
		if p != serving {
			fwd = p
			break
		}
	}
	_, err := pgx.Connect(ctx, url(fwd, "wrong"))
	wantCode(t, err, "28P01")

	// --http-listen: each node reports itself; the serving node's console
	// and metrics are its engine's, a forwarding node's page names the
	// serving node.
	get := func(addr, path string) (int, string) {
		t.Helper()
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(b)
	}
	if code, body := get(web[serving], "/health"); code != 200 || !strings.Contains(body, "ok") {
		t.Fatalf("serving node's /health: %d %q", code, body)
	}
	if code, body := get(web[serving], "/metrics"); code != 200 || !strings.Contains(body, "pivotdb_connections_total") {
		t.Fatalf("serving node's /metrics: %d %.300q", code, body)
	}
	if code, body := get(web[serving], "/"); code != 200 || !strings.Contains(body, "<title>PivotDB console</title>") {
		t.Fatalf("serving node's console: %d %.300q", code, body)
	}
	if code, body := get(web[fwd], "/"); code != 200 || !strings.Contains(body, "SQL at "+serving.sql) {
		t.Fatalf("forwarding node's page: %d %q", code, body)
	}
	if code, body := get(web[fwd], "/health"); code != 200 || !strings.Contains(body, "forwards SQL connections") {
		t.Fatalf("forwarding node's /health: %d %q", code, body)
	}
	if code, body := get(web[fwd], "/metrics"); code != 200 || !strings.Contains(body, "pivotdb_cluster_serving 0") {
		t.Fatalf("forwarding node's /metrics: %d %q", code, body)
	}

	// The client's address through a forwarding node.
	c := connect(fwd)
	var addr string
	var port int32
	if err := c.QueryRow(ctx, "SELECT client_addr, client_port FROM pg_stat_activity WHERE pid = pg_backend_pid()").Scan(&addr, &port); err != nil {
		t.Fatal(err)
	}
	local := c.PgConn().Conn().LocalAddr().(*net.TCPAddr)
	if addr != local.IP.String() || int(port) != local.Port {
		t.Fatalf("the serving node sees the client at %s:%d, the client is at %s", addr, port, local)
	}
	c.Close(ctx)

	// A forged header: signed with another key.
	forged := appendProxyHeaderForTest(&net.TCPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 4242},
		&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5432}, []byte("not the cluster's key, 32 bytes!"))
	rc, err := net.Dial("tcp", serving.sql)
	if err != nil {
		t.Fatal(err)
	}
	rc.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := rc.Write(forged); err != nil {
		t.Fatal(err)
	}
	if n, err := rc.Read(make([]byte, 1)); n != 0 || err == nil {
		t.Fatalf("a forged PROXY header was answered: %d bytes, %v", n, err)
	}
	rc.Close()

	// The serving node stops; a connection through a forwarding node is
	// served by the next serving node within seconds.
	if err := serving.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	cctx, cancel := context.WithTimeout(ctx, 45*time.Second)
	defer cancel()
	var c2 *pgx.Conn
	for {
		c2, err = pgx.Connect(cctx, url(fwd, password))
		if err == nil {
			if _, err = c2.Exec(cctx, "SELECT 1"); err == nil {
				break
			}
			c2.Close(ctx)
		}
		if cctx.Err() != nil {
			t.Fatalf("no connection through node %s while the serving node is stopped: %v", fwd.sql, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("connected through %s %s after the serving node stopped", fwd.sql, time.Since(start).Round(time.Millisecond))
	c2.Close(ctx)
	if err := serving.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
}

// appendProxyHeaderForTest builds a PROXY v2 header as cmd/pivotdb does
// (TCP over IPv4 and the signature TLV), signed with key.
func appendProxyHeaderForTest(src, dst *net.TCPAddr, key []byte) []byte {
	var b bytes.Buffer
	b.Write([]byte{0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A, 0x21, 0x11, 0, 12 + 3 + 32})
	b.Write(src.IP.To4())
	b.Write(dst.IP.To4())
	b.Write([]byte{byte(src.Port >> 8), byte(src.Port), byte(dst.Port >> 8), byte(dst.Port)})
	b.Write([]byte{0xE0, 0, 32})
	b.Write(bytes.Repeat(key[:1], 32))
	return b.Bytes()
}
