package tests

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pivotdb/pivotdb/panics"
	"github.com/pivotdb/pivotdb/partition"
	"github.com/pivotdb/pivotdb/server"
	pivotsql "github.com/pivotdb/pivotdb/sql"
)

// inProcessServer runs the engine and the server in the test process, so
// that tests can arm panics.Inject points; clients still talk over the wire.
// The balancer and the TTL runner tick every 10 ms.
func inProcessServer(t *testing.T) string {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	eng, err := pivotsql.Open(pivotsql.Options{DataDir: t.TempDir(), NoSync: true, Events: log,
		Balancer:    partition.BalancerOptions{Interval: 10 * time.Millisecond, Logger: log},
		TTLInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New(server.Config{Listen: "127.0.0.1:0", Logger: log}, server.FromSQL(eng))
	if err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background()) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		<-done
		if err := eng.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	host, port, _ := net.SplitHostPort(srv.Addr().String())
	return fmt.Sprintf("postgres://pivotdb@%s:%s/pivotdb?sslmode=disable", host, port)
}

// waitPanics waits until n more panics than before were recovered; the
// deadline is a safety net, not a measurement.
func waitPanics(t *testing.T, before uint64, n uint64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for panics.Count() < before+n {
		if time.Now().After(deadline) {
			t.Fatalf("%d panics recovered, want %d", panics.Count()-before, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestBackgroundPanics injects a panic into each kind of background
// goroutine: the statement a scan worker belongs to fails with XX000 and
// its connection carries on; the balancer, the TTL runner and the key
// filter rewrite log and count theirs and keep running; the server keeps
// serving throughout.
func TestBackgroundPanics(t *testing.T) {
	url := inProcessServer(t)
	ctx := ctxT(t)
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	mustExec(t, c, `CREATE TABLE s (h Uint64 AS (farm_hash(k)), k Int64, PRIMARY KEY (h, k)) WITH (UNIFORM_PARTITIONS = 4)`)
	var vals []string
	for i := range 1000 {
		vals = append(vals, fmt.Sprintf("(%d)", i))
	}
	mustExec(t, c, "INSERT INTO s (k) VALUES "+strings.Join(vals, ","))
	count := func() (int, error) {
		var n int
		err := c.QueryRow(ctx, "SELECT count(*) FROM s", pgx.QueryExecModeSimpleProtocol).Scan(&n)
		return n, err
	}

	t.Run("scan worker", func(t *testing.T) {
		before := panics.Count()
		defer panics.Arm("exec.scanworker", 1)()
		_, err := count()
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "XX000" || pe.Severity != "ERROR" ||
			!strings.Contains(pe.Message, "panic in exec: parallel scan worker") {
			t.Fatalf("got %v, want ERROR XX000 from the scan worker", err)
		}
		if panics.Count() != before+1 {
			t.Fatalf("%d panics counted, want 1", panics.Count()-before)
		}
		// Same connection, next statement: fine.
		if n, err := count(); err != nil || n != 1000 {
			t.Fatalf("after the panic: %d rows, %v", n, err)
		}
	})

	t.Run("balancer", func(t *testing.T) {
		before := panics.Count()
		defer panics.Arm("partition.balancer.tick", 2)()
		// Two panics: the balancer survived the first.
		waitPanics(t, before, 2)
		if n, err := count(); err != nil || n != 1000 {
			t.Fatalf("after balancer panics: %d rows, %v", n, err)
		}
	})

	t.Run("TTL runner", func(t *testing.T) {
		mustExec(t, c, `CREATE TABLE e (id Int64, ts Timestamp, PRIMARY KEY (id)) WITH (TTL = Interval("PT1H") ON ts)`)
		before := panics.Count()
		disarm := panics.Arm("partition.ttl.erase", 2)
		waitPanics(t, before, 2)
		disarm()
		// The runner still erases: an expired row goes from row_count.
		mustExec(t, c, `INSERT INTO e VALUES (1, Timestamp("2000-01-01T00:00:00Z")), (2, NULL)`)
		if got := waitErased(t, c, "e", 1); got != 1 {
			t.Fatalf("row_count of e after the runner panicked: %d, want 1", got)
		}
	})

	t.Run("key filter rewrite", func(t *testing.T) {
		before := panics.Count()
		defer panics.Arm("sql.keyfilter.compact", 1)()
		mustExec(t, c, `ALTER TABLE s SET (KEY_BLOOM_FILTER = ENABLED)`)
		waitPanics(t, before, 1)
		if n, err := count(); err != nil || n != 1000 {
			t.Fatalf("after the rewrite panicked: %d rows, %v", n, err)
		}
	})
}
