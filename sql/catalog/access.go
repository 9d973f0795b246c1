package catalog

import (
	"github.com/pivotdb/pivotdb/sql/acl"
)

// Owned is what every object with privileges carries: its owner and its
// access control list.
type Owned struct {
	// Owner is the role that created the object; "" in records from
	// before owners, which belong to the bootstrap user.
	Owner string `json:"owner,omitempty"`
	// ACL is nil until the first GRANT or REVOKE on the object (the owner
	// then holds everything: acl.Default), and never nil after one, even
	// when every grant was revoked. Hence no omitempty.
	ACL acl.ACL `json:"acl"`
}

// OwnerName is the object's owner.
func (o *Owned) OwnerName() string {
	if o.Owner == "" {
		return BootstrapUser
	}
	return o.Owner
}

// EffectiveACL is the object's ACL, or its default when it has none.
func (o *Owned) EffectiveACL(k acl.Kind) acl.ACL {
	if o.ACL == nil {
		return acl.Default(k, o.OwnerName())
	}
	return o.ACL
}

// Access answers what one role may do in one snapshot: its attributes
// (which are not inherited, as in PostgreSQL), the roles it is a member of
// (whose privileges and ownerships it holds), and its privileges on
// objects. A role that does not exist holds what PUBLIC holds.
type Access struct {
	role  string
	user  *User
	held  map[string]bool
	super bool
}

// Access returns the access of role.
func (s *Snapshot) Access(role string) *Access {
	a := &Access{role: role, held: map[string]bool{}}
	a.user, _ = s.User(role)
	a.super = a.user != nil && a.user.Superuser
	// The roles role is a member of, directly or through other roles.
	var visit func(name string)
	visit = func(name string) {
		if a.held[name] {
			return
		}
		a.held[name] = true
		if u, ok := s.User(name); ok {
			for _, m := range u.MemberOf {
				visit(m)
			}
		}
	}
	visit(role)
	return a
}

// Role is the role the access is for.
func (a *Access) Role() string { return a.role }

// Superuser reports whether the role is a superuser, who passes every check.
func (a *Access) Superuser() bool { return a.super }

// CreateDB reports whether the role may create databases.
func (a *Access) CreateDB() bool { return a.super || a.user != nil && a.user.CreateDB }

// CreateRole reports whether the role may create, alter membership of and
// drop roles other than superusers.
func (a *Access) CreateRole() bool { return a.super || a.user != nil && a.user.CreateRole }

// MemberOf reports whether the role is role or a member of it (a
// superuser is a member of every role, as for pg_has_role).
func (a *Access) MemberOf(role string) bool { return a.super || a.held[role] }

// InRole reports whether the role is role or was granted it, directly or
// through other roles (superuser or not).
func (a *Access) InRole(role string) bool { return a.held[role] }

// Owns reports whether the role owns the object (directly, through a role
// it is a member of, or as a superuser).
func (a *Access) Owns(o *Owned) bool { return a.MemberOf(o.OwnerName()) }

// Privileges are what the role holds on an object of kind k: every
// privilege with its grant option when it owns it, else what its ACL
// grants the role, the roles it is a member of and PUBLIC.
func (a *Access) Privileges(o *Owned, k acl.Kind) (privs, options acl.Privilege) {
	if a.Owns(o) {
		return acl.All(k), acl.All(k)
	}
	return o.EffectiveACL(k).Privileges(a.held)
}

// Has reports whether the role holds every privilege of p on the object.
func (a *Access) Has(o *Owned, k acl.Kind, p acl.Privilege) bool {
	privs, _ := a.Privileges(o, k)
	return privs&p == p
}
