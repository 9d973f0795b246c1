package acl

import (
	"reflect"
	"testing"
)

func TestItemText(t *testing.T) {
	a := Default(Table, "alice")
	a = a.Grant("", "alice", Select, false)
	a = a.Grant("bob", "alice", Select|Insert, true)
	a = a.Grant("my role", "alice", Delete, false)
	want := []string{"alice=arwdD/alice", "=r/alice", "bob=a*r*/alice", `"my role"=d/alice`}
	if got := a.Strings(); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	if got := Default(Database, "o").Strings(); !reflect.DeepEqual(got, []string{"=c/o", "o=Cc/o"}) {
		t.Fatalf("database default %q", got)
	}
}

func TestGrantRevoke(t *testing.T) {
	a := Default(Table, "o").Grant("bob", "o", Select|Update, true)
	p, opt := a.Privileges(map[string]bool{"bob": true})
	if p != Select|Update || opt != Select|Update {
		t.Fatalf("bob holds %v (options %v)", p, opt)
	}
	a = a.Grant("carol", "bob", Select, false)
	if dep := a.Dependent("bob", Select); len(dep) != 1 || dep[0].Grantee != "carol" {
		t.Fatalf("dependent %v", dep)
	}
	if dep := a.Dependent("bob", Update); len(dep) != 0 {
		t.Fatalf("dependent on UPDATE %v", dep)
	}
	b := a.Revoke("bob", "o", Select, true)
	if p, opt := b.Privileges(map[string]bool{"bob": true}); p != Select|Update || opt != Update {
		t.Fatalf("after revoking the option: %v (options %v)", p, opt)
	}
	b = b.Revoke("bob", "o", Select|Update, false)
	if p, _ := b.Privileges(map[string]bool{"bob": true}); p != 0 {
		t.Fatalf("after revoke bob holds %v", p)
	}
	// A revoke by someone else than the grantor changes nothing.
	c := a.Revoke("carol", "o", Select, false)
	if p, _ := c.Privileges(map[string]bool{"carol": true}); p != Select {
		t.Fatalf("carol lost %v", p)
	}
	// Revoking everything leaves an empty, not a nil, list.
	if e := Default(Table, "o").Revoke("o", "o", All(Table), false); e == nil || len(e) != 0 {
		t.Fatalf("empty ACL %#v", e)
	}
	if p, _ := Default(Database, "o").Privileges(map[string]bool{"x": true}); p != Connect {
		t.Fatalf("PUBLIC on a database: %v", p)
	}
}

func TestNewOwner(t *testing.T) {
	a := Default(Table, "old").Grant("new", "old", Select, false).Grant("x", "old", Insert, true)
	got := a.NewOwner("old", "new").Strings()
	want := []string{"new=arwdD/new", "x=a*/new"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	if ACL(nil).NewOwner("a", "b") != nil {
		t.Fatal("a default ACL stays default")
	}
}
