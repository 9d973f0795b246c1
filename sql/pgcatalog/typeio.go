package pgcatalog

import (
	"sort"
	"strings"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// typeIOFuncs are the input and output functions of pg_type's base types,
// named as PostgreSQL names them: pg_type.typinput and typoutput hold the
// OIDs of their pg_proc rows, and clients compare them with a name cast to
// regproc (pgjdbc's TypeInfoCache asks typinput = 'array_in'::regproc to
// tell arrays apart). They describe the wire's text forms; they are not
// callable (PostgreSQL's take cstring, which SQL cannot spell either).
var typeIOFuncs = map[int64][2]string{
	16: {"boolin", "boolout"}, 17: {"byteain", "byteaout"}, 18: {"charin", "charout"},
	19: {"namein", "nameout"}, 20: {"int8in", "int8out"}, 21: {"int2in", "int2out"},
	23: {"int4in", "int4out"}, 25: {"textin", "textout"}, 26: {"oidin", "oidout"},
	114: {"json_in", "json_out"}, 700: {"float4in", "float4out"}, 701: {"float8in", "float8out"},
	705: {"unknownin", "unknownout"}, 1042: {"bpcharin", "bpcharout"}, 1043: {"varcharin", "varcharout"},
	1082: {"date_in", "date_out"}, 1083: {"time_in", "time_out"}, 1266: {"timetz_in", "timetz_out"}, 1114: {"timestamp_in", "timestamp_out"},
	1184: {"timestamptz_in", "timestamptz_out"}, 1186: {"interval_in", "interval_out"},
	1700: {"numeric_in", "numeric_out"}, 2205: {"regclassin", "regclassout"},
	2950: {"uuid_in", "uuid_out"}, 3802: {"jsonb_in", "jsonb_out"},
}

// The I/O functions of arrays, enums and domains (a domain's output is
// its base type's, as in PostgreSQL).
const (
	arrayIn, arrayOut = "array_in", "array_out"
	enumIn, enumOut   = "enum_in", "enum_out"
	domainIn          = "domain_in"
)

// ioFunctionNames lists the I/O functions pg_proc describes.
func ioFunctionNames() []string {
	out := []string{arrayIn, arrayOut, enumIn, enumOut, domainIn}
	for _, f := range typeIOFuncs {
		out = append(out, f[0], f[1])
	}
	return out
}

// procOIDs maps the built-in functions' names to their pg_proc OIDs.
type procOIDs []string

func (p procOIDs) oid(name string) int64 {
	i := sort.SearchStrings(p, name)
	if i < len(p) && p[i] == name {
		return procOIDBase + int64(i)
	}
	return 0
}

// typeIO returns the pg_proc OIDs of typinput and typoutput for the type
// with OID oid: base (0 for a base type) is a domain's base type.
func (p procOIDs) typeIO(oid, base int64) (in, out int64) {
	if base != 0 {
		return p.oid(domainIn), p.oid(typeIOFuncs[base][1])
	}
	f, ok := typeIOFuncs[oid]
	if !ok {
		return 0, 0
	}
	return p.oid(f[0]), p.oid(f[1])
}

// regprocOID is text::regproc: the OID of the function named s, which may
// be qualified by pg_catalog (the built-ins) or public (the database's
// functions) and double-quoted. As in PostgreSQL, an unknown name is 42883
// and an overloaded one 42725.
func (v *View) regprocOID(s string) (int64, error) {
	schema, name := "", strings.TrimSpace(s)
	quoted := false
	for i := 0; i < len(name); i++ {
		switch {
		case name[i] == '"':
			quoted = !quoted
		case name[i] == '.' && !quoted:
			schema, name = unquoteIdent(name[:i]), name[i+1:]
			i = -1
		}
	}
	name = unquoteIdent(name)
	var found []int64
	if schema == "" || schema == "pg_catalog" {
		if oid := procOIDs(procNames()).oid(name); oid != 0 {
			found = append(found, oid)
		}
	}
	if schema == "" || schema == "public" {
		for _, f := range v.userFunctions() {
			if f.Name == name {
				found = append(found, userFunctionOID(f))
			}
		}
	}
	switch len(found) {
	case 0:
		return 0, sqlerr.New(sqlerr.UndefinedFunction, "function %q does not exist", s)
	case 1:
		return found[0], nil
	}
	return 0, sqlerr.New(sqlerr.AmbiguousFunction, "more than one function named %q", s)
}

// unquoteIdent folds an identifier as PostgreSQL reads one: a quoted one
// as written, a bare one to lower case.
func unquoteIdent(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return strings.ReplaceAll(s[1:len(s)-1], `""`, `"`)
	}
	return strings.ToLower(s)
}
