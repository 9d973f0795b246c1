package acl

import "strings"

// Privilege is a set of privileges (a bit mask).
type Privilege uint16

// The privileges PivotDB checks. Tables and views take SELECT, INSERT,
// UPDATE, DELETE and TRUNCATE; databases CREATE (of tables, views and
// indexes in them: PivotDB has one schema per database, so the schema's
// CREATE privilege is the database's) and CONNECT.
const (
	Select Privilege = 1 << iota
	Insert
	Update
	Delete
	Truncate
	Create
	Connect
)

// Kind is the kind of object a privilege is granted on.
type Kind uint8

// The kinds of objects that carry an ACL.
const (
	Table Kind = iota + 1 // tables and views
	Database
)

// All is every privilege an object of the kind can carry (ALL
// [PRIVILEGES]).
func All(k Kind) Privilege {
	if k == Database {
		return Create | Connect
	}
	return Select | Insert | Update | Delete | Truncate
}

// privilegeNames gives each privilege its keyword and its aclitem letter
// (PostgreSQL's: r a w d D C c), in the order aclitem prints them.
var privilegeNames = []struct {
	p      Privilege
	letter byte
	name   string
}{
	{Insert, 'a', "INSERT"}, {Select, 'r', "SELECT"}, {Update, 'w', "UPDATE"}, {Delete, 'd', "DELETE"},
	{Truncate, 'D', "TRUNCATE"}, {Create, 'C', "CREATE"}, {Connect, 'c', "CONNECT"},
}

// Parse returns the privilege named by a keyword (any case).
func Parse(name string) (Privilege, bool) {
	for _, n := range privilegeNames {
		if strings.EqualFold(n.name, name) {
			return n.p, true
		}
	}
	return 0, false
}

// String lists the privileges' keywords, comma separated.
func (p Privilege) String() string {
	var names []string
	for _, n := range privilegeNames {
		if p&n.p != 0 {
			names = append(names, n.name)
		}
	}
	return strings.Join(names, ", ")
}

// Item is one grant: Grantee (empty for PUBLIC) holds Privs, and may grant
// GrantOptions (a subset of Privs) to others, by the grant of Grantor.
type Item struct {
	Grantee      string    `json:"grantee,omitempty"`
	Grantor      string    `json:"grantor"`
	Privs        Privilege `json:"privs"`
	GrantOptions Privilege `json:"grant_options,omitempty"`
}

// String is the aclitem text form: grantee=privileges/grantor, each
// privilege's letter followed by '*' when it carries the grant option, the
// grantee empty for PUBLIC.
func (it Item) String() string {
	var sb strings.Builder
	sb.WriteString(quoteRole(it.Grantee))
	sb.WriteByte('=')
	for _, n := range privilegeNames {
		if it.Privs&n.p != 0 {
			sb.WriteByte(n.letter)
			if it.GrantOptions&n.p != 0 {
				sb.WriteByte('*')
			}
		}
	}
	sb.WriteByte('/')
	sb.WriteString(quoteRole(it.Grantor))
	return sb.String()
}

// QuoteRole is quoteRole, for aclitems of object kinds this package does
// not model (pg_catalog's acldefault).
func QuoteRole(name string) string { return quoteRole(name) }

// quoteRole quotes a role name the way aclitem output does (PostgreSQL's
// putid): in double quotes, doubled inside, unless it is only letters,
// digits and underscores.
func quoteRole(name string) string {
	plain := true
	for _, r := range name {
		if !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= 0x80) {
			plain = false
			break
		}
	}
	if plain {
		return name
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// ACL is an object's list of grants, one Item per (grantee, grantor).
type ACL []Item

// Default is the ACL of an object never granted on: its owner holds every
// privilege, and on a database PUBLIC may CONNECT (PostgreSQL's acldefault;
// PUBLIC's TEMPORARY is left out, PivotDB has no temporary tables).
func Default(k Kind, owner string) ACL {
	a := ACL{{Grantee: owner, Grantor: owner, Privs: All(k)}}
	if k == Database {
		a = ACL{{Grantor: owner, Privs: Connect}, a[0]}
	}
	return a
}

// Strings are the items in aclitem form, in order.
func (a ACL) Strings() []string {
	out := make([]string, len(a))
	for i, it := range a {
		out[i] = it.String()
	}
	return out
}

// Privileges returns what the roles of held (a role and every role it is a
// member of; "" for PUBLIC) hold: privileges and grant options.
func (a ACL) Privileges(held map[string]bool) (privs, options Privilege) {
	for _, it := range a {
		if it.Grantee == "" || held[it.Grantee] {
			privs |= it.Privs
			options |= it.GrantOptions
		}
	}
	return privs, options
}

// Grant returns a copy of a in which grantee holds privs from grantor, with
// the grant option for them when withOption is set.
func (a ACL) Grant(grantee, grantor string, privs Privilege, withOption bool) ACL {
	out := append(ACL{}, a...)
	i := out.find(grantee, grantor)
	if i < 0 {
		out = append(out, Item{Grantee: grantee, Grantor: grantor})
		i = len(out) - 1
	}
	out[i].Privs |= privs
	if withOption {
		out[i].GrantOptions |= privs
	}
	return out
}

// Revoke returns a copy of a in which grantee no longer holds privs from
// grantor (only the grant option for them when optionOnly is set). Items
// left with no privilege are removed; the result is never nil, so that an
// object whose every grant was revoked does not fall back to Default.
func (a ACL) Revoke(grantee, grantor string, privs Privilege, optionOnly bool) ACL {
	out := ACL{}
	for _, it := range a {
		if it.Grantee == grantee && it.Grantor == grantor {
			it.GrantOptions &^= privs
			if !optionOnly {
				it.Privs &^= privs
			}
			if it.Privs == 0 {
				continue
			}
		}
		out = append(out, it)
	}
	return out
}

// Dependent returns the grants made by grantor of any of privs: the ones a
// revoke of grantor's grant option for privs would leave without a source.
func (a ACL) Dependent(grantor string, privs Privilege) []Item {
	var out []Item
	for _, it := range a {
		if it.Grantor == grantor && it.Grantee != grantor && it.Privs&privs != 0 {
			out = append(out, it)
		}
	}
	return out
}

// Mentions reports whether role is a grantee or a grantor of some item.
func (a ACL) Mentions(role string) bool {
	for _, it := range a {
		if it.Grantee == role || it.Grantor == role {
			return true
		}
	}
	return false
}

func (a ACL) find(grantee, grantor string) int {
	for i, it := range a {
		if it.Grantee == grantee && it.Grantor == grantor {
			return i
		}
	}
	return -1
}

// NewOwner returns a copy of a for an object given from oldOwner to
// newOwner: the old owner's grants, received and given, become the new
// owner's (PostgreSQL's aclnewowner), merged with any the new owner had.
func (a ACL) NewOwner(oldOwner, newOwner string) ACL {
	if a == nil {
		return nil
	}
	out := ACL{}
	for _, it := range a {
		if it.Grantee == oldOwner {
			it.Grantee = newOwner
		}
		if it.Grantor == oldOwner {
			it.Grantor = newOwner
		}
		if i := out.find(it.Grantee, it.Grantor); i >= 0 {
			out[i].Privs |= it.Privs
			out[i].GrantOptions |= it.GrantOptions
			continue
		}
		out = append(out, it)
	}
	return out
}
