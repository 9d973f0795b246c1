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
	"github.com/pivotdb/pivotdb/sql/acl"
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

func newTestCatalog(t testing.TB) *testCatalog {
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
func (c *testCatalog) create(t testing.TB, ct *CreateTable, owner string) {
	c.change(t, func(ch *catalog.Change) {
		tbl := *ct.Table
		tbl.ID = ch.NewID()
		tbl.Owner = owner
		for i := range tbl.Indexes {
			tbl.Indexes[i].ID = ch.NewID()
		}
		ch.PutTable(&tbl)
	})
}

// change applies fn to the catalog and installs the result.
func (c *testCatalog) change(t testing.TB, fn func(ch *catalog.Change)) {
	ch := c.cat.Begin()
	fn(ch)
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
//	bind [user=u]     the statement's kind, result columns and $n types,
//	                  and for a query its plan; an error as SQLSTATE: message
//	                  (user: bound for role u instead of pivotdb)
//	create [owner=u]  binds CREATE TABLE or CREATE VIEW (for role u) and
//	                  installs it, owned by u
//	role              creates the roles named on its lines ("name
//	                  [superuser] [member-of=r]")
//	grant             "privileges on relation to role": an ACL entry the
//	                  relation's owner grants
func TestBind(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		c := newTestCatalog(t)
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "role":
				c.roles(t, d.Input)
				return "ok\n"
			case "grant":
				c.grant(t, d.Input)
				return "ok\n"
			}
			owner, user := "", "pivotdb"
			if d.HasArg("owner") {
				d.ScanArgs(t, "owner", &owner)
				user = owner // the creator owns what it creates
			}
			if d.HasArg("user") {
				d.ScanArgs(t, "user", &user)
			}
			c.env.User = user
			defer func() { c.env.User = "pivotdb" }()
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
				switch st := st.(type) {
				case *CreateTable:
					c.create(t, st, owner)
				case *CreateView:
					c.change(t, func(ch *catalog.Change) {
						ch.PutView(&catalog.View{ID: ch.NewID(), DatabaseID: c.env.Database.ID, Name: st.Name,
							Definition: st.Text, Owned: catalog.Owned{Owner: owner}})
					})
				default:
					d.Fatalf(t, "not CREATE TABLE or VIEW: %T", st)
				}
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
		for _, l := range st.Locking {
			fmt.Fprintf(&b, "lock %s (table %s) %s %s\n", l.Name, l.Table.Name, l.Strength, l.Wait)
		}
		if st.AsOf != nil {
			fmt.Fprintf(&b, "as of %s\n", st.AsOf)
		}
	case *Txn:
		if st.AsOf != nil {
			fmt.Fprintf(&b, "as of %s\n", st.AsOf)
		}
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

// roles creates roles: "name [superuser] [member-of=r]" per line.
func (c *testCatalog) roles(t *testing.T, input string) {
	c.change(t, func(ch *catalog.Change) {
		for _, line := range strings.Split(strings.TrimSpace(input), "\n") {
			f := strings.Fields(line)
			u := &catalog.User{Name: f[0]}
			for _, opt := range f[1:] {
				switch {
				case opt == "superuser":
					u.Superuser = true
				case strings.HasPrefix(opt, "member-of="):
					u.MemberOf = append(u.MemberOf, strings.TrimPrefix(opt, "member-of="))
				default:
					t.Fatalf("role option %q", opt)
				}
			}
			ch.PutUser(u)
		}
	})
}

// grant adds "PRIV[,PRIV] on REL to ROLE" lines to the relations' ACLs, as
// granted by their owners (ROLE "public" is PUBLIC).
func (c *testCatalog) grant(t *testing.T, input string) {
	c.change(t, func(ch *catalog.Change) {
		for _, line := range strings.Split(strings.TrimSpace(input), "\n") {
			f := strings.Fields(line)
			if len(f) != 5 || f[1] != "on" || f[3] != "to" {
				t.Fatalf("grant line %q", line)
			}
			var privs acl.Privilege
			for _, name := range strings.Split(f[0], ",") {
				p, ok := acl.Parse(name)
				if !ok {
					t.Fatalf("privilege %q", name)
				}
				privs |= p
			}
			grantee := f[4]
			if grantee == "public" {
				grantee = ""
			}
			snap := ch.Snapshot()
			if tbl, ok := snap.Table(c.env.Database.ID, f[2]); ok {
				nt := *tbl
				nt.ACL = tbl.EffectiveACL(acl.Table).Grant(grantee, tbl.OwnerName(), privs, false)
				ch.PutTable(&nt)
			} else if v, ok := snap.View(c.env.Database.ID, f[2]); ok {
				nv := *v
				nv.ACL = v.EffectiveACL(acl.Table).Grant(grantee, v.OwnerName(), privs, false)
				ch.PutView(&nv)
			} else {
				t.Fatalf("no relation %q", f[2])
			}
		}
	})
}
