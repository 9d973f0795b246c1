package sql

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/sql/types"
)

// TestComputedKeyMatchesPlainTable runs random queries against a table keyed
// by (hash AS farm_hash(key), key) and against the same rows in a table
// keyed by key alone, and compares the results: range inference through
// the computed column must never change an answer.
func TestComputedKeyMatchesPlainTable(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	r := rand.New(rand.NewPCG(seed, 9))
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE hashed (hash Uint64 AS (farm_hash(key)), key Utf8, n Int64, PRIMARY KEY (hash, key)) WITH (UNIFORM_PARTITIONS = 8)")
	query(t, s, "CREATE TABLE salted (b Uint64 AS (farm_hash(n) % 5), n Int64, key Utf8, PRIMARY KEY (b, n))")
	query(t, s, "CREATE TABLE plain (key Utf8, n Int64, PRIMARY KEY (key))")
	for i := 0; i < 200; i++ {
		k, n := fmt.Sprintf("k%03d", i), int64(r.IntN(300))
		query(t, s, "INSERT INTO plain VALUES ($1, $2)", types.NewUtf8(k), types.NewInt64(n))
		query(t, s, "INSERT INTO hashed (key, n) VALUES ($1, $2)", types.NewUtf8(k), types.NewInt64(n))
		query(t, s, "UPSERT INTO salted (n, key) VALUES ($1, $2)", types.NewInt64(n), types.NewUtf8(k))
	}
	randKey := func() string { return fmt.Sprintf("'k%03d'", r.IntN(220)) }
	preds := []func() string{
		func() string { return "key = " + randKey() },
		func() string { return fmt.Sprintf("key IN (%s, %s, %s)", randKey(), randKey(), randKey()) },
		func() string { return fmt.Sprintf("key BETWEEN %s AND %s", randKey(), randKey()) },
		func() string { return fmt.Sprintf("(key = %s OR n < %d)", randKey(), r.IntN(300)) },
		func() string { return fmt.Sprintf("n BETWEEN %d AND %d", r.IntN(300), r.IntN(300)) },
		func() string { return fmt.Sprintf("n IN (%d, %d)", r.IntN(300), r.IntN(300)) },
		func() string { return fmt.Sprintf("NOT (key <> %s)", randKey()) },
	}
	rows := func(sql string) string {
		got := query(t, s, sql)
		out := make([]string, len(got))
		for i, row := range got {
			out[i] = row[0].Str() + "/" + row[1].Text()
		}
		return strings.Join(out, ",")
	}
	for i := 0; i < 300; i++ {
		pred := preds[r.IntN(len(preds))]()
		if r.IntN(3) == 0 {
			pred += " AND " + preds[r.IntN(len(preds))]()
		}
		want := rows("SELECT key, n FROM plain WHERE " + pred + " ORDER BY key")
		if got := rows("SELECT key, n FROM hashed WHERE " + pred + " ORDER BY key"); got != want {
			t.Fatalf("seed %d: WHERE %s\nhashed: %s\nplain:  %s", seed, pred, got, want)
		}
		// salted keeps one key per n (UPSERT), so compare n values only.
		wantN := rows("SELECT 'k', n FROM plain WHERE " + strings.ReplaceAll(pred, "key", "'k'") + " GROUP BY n ORDER BY n")
		gotN := rows("SELECT min('k'), n FROM salted WHERE " + strings.ReplaceAll(pred, "key", "'k'") + " GROUP BY n ORDER BY n")
		if gotN != wantN {
			t.Fatalf("seed %d: WHERE %s\nsalted: %s\nplain:  %s", seed, pred, gotN, wantN)
		}
	}
}

// TestHashedInReadsOnlyItsRows checks with the shards' read counters that a
// 1,000-key IN on a 16-shard hash-sharded table reads exactly 1,000 rows.
func TestHashedInReadsOnlyItsRows(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE h (hash Uint64 AS (farm_hash(key)), key Utf8, v Int64, PRIMARY KEY (hash, key)) WITH (UNIFORM_PARTITIONS = 16)")
	var sb strings.Builder
	sb.WriteString("INSERT INTO h (key, v) VALUES ")
	for i := 0; i < 5000; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, "('key-%d', %d)", i, i)
	}
	query(t, s, sb.String())
	reads := func() int64 {
		return query(t, s, "SELECT sum(reads)::Int64 FROM sys.partitions WHERE table_name = 'h'")[0][0].Int()
	}
	before := reads()
	sb.Reset()
	sb.WriteString("SELECT count(*) FROM h WHERE key IN (")
	for i := 0; i < 1000; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, "'key-%d'", i*5)
	}
	sb.WriteString(")")
	if n := query(t, s, sb.String())[0][0].Int(); n != 1000 {
		t.Fatalf("IN found %d rows", n)
	}
	if got := reads() - before; got != 1000 {
		t.Fatalf("the IN query read %d rows, want exactly 1000", got)
	}
}
