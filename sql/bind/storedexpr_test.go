package bind

import (
	"fmt"
	"sync"
	"testing"

	"github.com/pivotdb/pivotdb/sql/parser"
)

// TestStoredExprsShared binds writes into a table with a computed key and a
// column default from several goroutines at once (run with -race): the
// parsed expressions they share through storedExprs must only be read,
// and each binding must describe its table's expressions.
func TestStoredExprsShared(t *testing.T) {
	c := newTestCatalog(t)
	for _, ddl := range []string{
		"CREATE TABLE hkv (h Uint64 AS (farm_hash(k)), k Int64, v Utf8 DEFAULT 'none', PRIMARY KEY (h, k))",
		"CREATE TABLE hkv2 (h Uint64 AS (farm_hash(k) % 7), k Int64, v Utf8 DEFAULT 'other', PRIMARY KEY (h, k))",
	} {
		stmts, err := parser.Parse(ddl)
		if err != nil {
			t.Fatal(err)
		}
		st, _, err := Bind(&stmts[0], nil, c.env)
		if err != nil {
			t.Fatal(err)
		}
		c.create(t, st.(*CreateTable), "pivotdb")
	}
	want := map[string][2]string{
		"hkv":  {"farm_hash(k)", "'none'"},
		"hkv2": {"farm_hash(k) % 7", "'other'"},
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				table := []string{"hkv", "hkv2"}[(g+i)%2]
				sql := fmt.Sprintf("UPSERT INTO %s (k) VALUES (%d)", table, i)
				if i%3 == 0 {
					sql = fmt.Sprintf("UPDATE %s SET v = 'x' WHERE k = %d", table, i)
				}
				stmts, err := parser.Parse(sql)
				if err != nil {
					errs <- err
					return
				}
				st, _, err := Bind(&stmts[0], nil, c.env)
				if err != nil {
					errs <- fmt.Errorf("%s: %w", sql, err)
					return
				}
				if ins, ok := st.(*Insert); ok {
					if got := ins.Computed[0].String(); got != want[table][0] {
						errs <- fmt.Errorf("%s: computed h = %s, want %s", sql, got, want[table][0])
						return
					}
					if got := ins.Defaults[2].String(); got != want[table][1] {
						errs <- fmt.Errorf("%s: default v = %s, want %s", sql, got, want[table][1])
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
