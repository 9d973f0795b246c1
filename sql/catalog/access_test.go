package catalog

import (
	"testing"

	"github.com/pivotdb/pivotdb/sql/acl"
)

// TestAccess: membership is transitive and brings the roles' privileges
// and ownerships; attributes are not inherited; superusers pass every
// check; an unknown role holds what PUBLIC holds.
func TestAccess(t *testing.T) {
	snap := &Snapshot{users: map[string]*User{
		"root":   {Name: "root", Superuser: true},
		"owners": {Name: "owners", NoLogin: true, CreateDB: true},
		"mid":    {Name: "mid", MemberOf: []string{"owners"}},
		"alice":  {Name: "alice", MemberOf: []string{"mid"}},
		"bob":    {Name: "bob"},
	}}
	tbl := &Owned{Owner: "owners"}
	grantedTo := &Owned{Owner: "root", ACL: acl.Default(acl.Table, "root").Grant("mid", "root", acl.Select, false).
		Grant("", "root", acl.Insert, false)}

	alice := snap.Access("alice")
	if !alice.InRole("owners") || !alice.Owns(tbl) || alice.CreateDB() {
		t.Fatalf("alice: member %v, owns %v, createdb %v", alice.InRole("owners"), alice.Owns(tbl), alice.CreateDB())
	}
	if p, _ := alice.Privileges(grantedTo, acl.Table); p != acl.Select|acl.Insert {
		t.Fatalf("alice holds %v", p)
	}
	bob := snap.Access("bob")
	if bob.Owns(tbl) || bob.Has(grantedTo, acl.Table, acl.Select) || !bob.Has(grantedTo, acl.Table, acl.Insert) {
		t.Fatal("bob")
	}
	nobody := snap.Access("nobody")
	if nobody.Superuser() || !nobody.Has(grantedTo, acl.Table, acl.Insert) || nobody.Has(grantedTo, acl.Table, acl.Select) {
		t.Fatal("an unknown role must hold what PUBLIC holds")
	}
	root := snap.Access("root")
	if !root.Owns(tbl) || !root.MemberOf("bob") || root.InRole("bob") || !root.CreateRole() {
		t.Fatal("root")
	}
	// Objects from before owners belong to the bootstrap user.
	if (&Owned{}).OwnerName() != BootstrapUser {
		t.Fatal("default owner")
	}
}
