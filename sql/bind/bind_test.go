package bind

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/pivotdb/pivotdb/meta"
	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sessionvars"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
	"github.com/pivotdb/pivotdb/storage"
)

// testCatalog is a catalog in a temporary engine, and an Env over it: the
// binder runs without a Session.
type testCatalog struct {
	store *meta.Store
	cat   *catalog.Catalog
	env   *Env
}

func newTestCatalog(t *testing.T) *testCatalog {
	eng, err := storage.Open(t.TempDir(), storage.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	store := meta.Open(eng)
	cat, err := catalog.Load(store)
	if err != nil {
		t.Fatal(err)
	}
	db, _ := cat.Snapshot().Database(catalog.DefaultDatabase)
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return &testCatalog{store: store, cat: cat, env: &Env{
		Snapshot: cat.Snapshot(), Database: db, User: "pivotdb", Settings: sessionvars.New(nil),
		Now:           func() time.Time { return clock },
		PartitionRows: func() ([][]types.Value, error) { return nil, errors.New("no shards in this test") },
	}}
}

// create installs the table a bound CREATE TABLE describes.
func (c *testCatalog) create(t *testing.T, ct *CreateTable) {
	ch := c.cat.Begin()
	tbl := *ct.Table
	tbl.ID = ch.NewID()
	for i := range tbl.Indexes {
		tbl.Indexes[i].ID = ch.NewID()
	}
	ch.PutTable(&tbl)
	b := c.store.NewBatch()
	defer b.Close()
	if err := ch.Write(b); err != nil {
		ch.Abort()
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		ch.Abort()
		t.Fatal(err)
	}
	ch.Install()
	c.env.Snapshot = c.cat.Snapshot()
}

// TestBind binds the statements of testdata/bind against an Env and prints
// what they were bound to:
//
//	bind              the statement's kind, result columns and $n types,
//	                  and for a query its plan; an error as SQLSTATE: message
//	create            binds CREATE TABLE and installs the table
func TestBind(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		c := newTestCatalog(t)
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			stmts, err := parser.Parse(d.Input)
			if err != nil {
				return "parse error: " + err.Error() + "\n"
			}
			if len(stmts) != 1 {
				d.Fatalf(t, "want one statement, got %d", len(stmts))
			}
			st, params, err := Bind(&stmts[0], nil, c.env)
			if err != nil {
				var e *sqlerr.Error
				if errors.As(err, &e) {
					return e.Code + ": " + e.Message + "\n"
				}
				return "error: " + err.Error() + "\n"
			}
			switch d.Cmd {
			case "create":
				ct, ok := st.(*CreateTable)
				if !ok {
					d.Fatalf(t, "not CREATE TABLE: %T", st)
				}
				c.create(t, ct)
				return "ok\n"
			case "bind":
				return describe(st, params)
			}
			d.Fatalf(t, "unknown command %s", d.Cmd)
			return ""
		})
	})
}

// describe prints a bound statement.
func describe(st Statement, params []types.Type) string {
	var b strings.Builder
	b.WriteString(strings.TrimPrefix(fmt.Sprintf("%T", st), "*bind."))
	for _, c := range st.Columns() {
		if c.Hidden {
			continue
		}
		fmt.Fprintf(&b, " %s:%s", c.Name, c.Type)
	}
	if len(params) > 0 {
		b.WriteString(" params:")
		for i, p := range params {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(p.String())
		}
	}
	b.WriteByte('\n')
	var node planner.Node
	switch st := st.(type) {
	case *Select:
		node = st.Node
	case *Explain:
		node = st.Node
	case *Modify:
		node = st.Scan
	case *Insert:
		node = st.Source
	}
	if node != nil {
		for _, l := range planner.Explain(node, func(*planner.Scan) []string { return nil }) {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}
