package tests

import (
	"context"
	"testing"
)

// TestCharOverTheWire checks char(n) as drivers see it: OID 1042 with the
// width in the type modifier, values padded to the width, and a parameter
// compared with a char column without its trailing blanks.
func TestCharOverTheWire(t *testing.T) {
	s := startServer(t)
	ctx := context.Background()
	c := s.dial(t, "pivotdb", "pivotdb", nil)
	for _, q := range []string{
		"CREATE TABLE chw (k char(4) PRIMARY KEY, n int)",
		"INSERT INTO chw VALUES ('ab', 1), ('abcd  ', 2)",
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	rows, err := c.Query(ctx, "SELECT k FROM chw WHERE k = $1", "ab")
	if err != nil {
		t.Fatal(err)
	}
	if fd := rows.FieldDescriptions(); fd[0].DataTypeOID != 1042 || fd[0].TypeModifier != 8 {
		t.Errorf("field: OID %d, typmod %d; want 1042, 8", fd[0].DataTypeOID, fd[0].TypeModifier)
	}
	var got []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		got = append(got, k)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != "ab  " {
		t.Errorf("k = 'ab': got %q, want [\"ab  \"]", got)
	}
	var n int
	if err := c.QueryRow(ctx, "SELECT n FROM chw WHERE k = $1", "abcd   ").Scan(&n); err != nil || n != 2 {
		t.Errorf("k = 'abcd   ': %d, %v", n, err)
	}
}
