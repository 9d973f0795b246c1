package pgcatalog

import (
	"testing"

	"github.com/pivotdb/pivotdb/sql/expr"
)

// TestFunctionTable checks every declaration: an arity that can be met,
// argument types for no more arguments than it takes, and a builder.
func TestFunctionTable(t *testing.T) {
	if len(sessionFuncs) < 30 {
		t.Fatalf("only %d session functions registered", len(sessionFuncs))
	}
	for name, f := range sessionFuncs {
		if f.build == nil || f.minArgs > f.maxArgs || len(f.argTypes) > f.maxArgs {
			t.Errorf("%s: bad declaration %+v", name, *f)
		}
	}
}

func TestLookupIsCaseInsensitiveAndDefaultsToPgCatalog(t *testing.T) {
	for _, c := range []struct{ schema, name, want string }{
		{"", "PG_CLASS", "pg_catalog.pg_class"},
		{"Information_Schema", "tables", "information_schema.tables"},
		{"", "tables", ""},
	} {
		got := ""
		if vt := Lookup(c.schema, c.name); vt != nil {
			got = vt.Schema + "." + vt.Name
		}
		if got != c.want {
			t.Errorf("Lookup(%q, %q) = %q, want %q", c.schema, c.name, got, c.want)
		}
	}
}

func TestVersionIsAConstant(t *testing.T) {
	e, ok, err := Function(&expr.Builder{}, &View{}, "version", nil)
	if err != nil || !ok {
		t.Fatalf("version(): %v %v", ok, err)
	}
	c, isConst := e.(*expr.Const)
	if !isConst || c.Value.Str() != "PostgreSQL 15.0 (PivotDB) on x86_64-pc-linux-gnu, compiled by Go" {
		t.Fatalf("version() = %v", e)
	}
	if _, ok, err := Function(&expr.Builder{}, &View{}, "no_such_function", nil); ok || err != nil {
		t.Fatalf("unknown function: %v %v", ok, err)
	}
}

func TestStoredExprText(t *testing.T) {
	for in, want := range map[string]string{
		"`amount`>0":                 "amount>0",
		"`Amount` + `order`":         `"Amount" + "order"`,
		"_UTF8MB4'it''s `x`' || `a`": "'it''s `x`' || a",
		"`a``b`":                     "\"a`b\"",
	} {
		if got := storedExprText(in); got != want {
			t.Errorf("storedExprText(%q) = %q, want %q", in, got, want)
		}
	}
}
