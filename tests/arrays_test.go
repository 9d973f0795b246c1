package tests

import (
	"errors"
	"reflect"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// TestPgxArrays sends Go slices as array parameters and reads arrays back
// in every pgx protocol mode: = ANY($1) with []int64 and []string (binary
// int8[] / text[] parameters in the extended modes, text in the simple
// one), array columns written from slices, NULL elements, and the array
// OIDs in RowDescription.
func TestPgxArrays(t *testing.T) {
	srv := startServer(t)
	setup := srv.connect(t, pgx.QueryExecModeSimpleProtocol)
	mustExec(t, setup, "CREATE TABLE pa (id int8 PRIMARY KEY, name text, tags text[], nums int4[])")
	mustExec(t, setup, `INSERT INTO pa VALUES (1, 'one', '{a,b}', '{1,2}'), (2, 'two', '{"x y"}', NULL), (3, 'three', '{}', '{3}')`)
	for name, mode := range execModes {
		t.Run(name, func(t *testing.T) {
			c := srv.connect(t, mode)
			ctx := ctxT(t)
			ids := func(sql string, args ...any) []int64 {
				t.Helper()
				rows, err := c.Query(ctx, sql, args...)
				if err != nil {
					t.Fatalf("%s: %v", sql, err)
				}
				got, err := pgx.CollectRows(rows, pgx.RowTo[int64])
				if err != nil {
					t.Fatalf("%s: %v", sql, err)
				}
				return got
			}
			if got := ids("SELECT id FROM pa WHERE id = ANY($1) ORDER BY id", []int64{3, 1, 42}); !reflect.DeepEqual(got, []int64{1, 3}) {
				t.Errorf("= ANY($1) with []int64: %v", got)
			}
			if got := ids("SELECT id FROM pa WHERE name = ANY($1) ORDER BY id", []string{"two", "nine"}); !reflect.DeepEqual(got, []int64{2}) {
				t.Errorf("= ANY($1) with []string: %v", got)
			}
			if got := ids("SELECT id FROM pa WHERE id <> ALL($1) AND id < 10 ORDER BY id", []int64{2}); !reflect.DeepEqual(got, []int64{1, 3}) {
				t.Errorf("<> ALL($1): %v", got)
			}
			if got := ids("SELECT id FROM pa WHERE id = ANY($1)", []int64{}); len(got) != 0 {
				t.Errorf("= ANY of an empty array: %v", got)
			}
			if got := ids("SELECT id FROM pa WHERE tags @> $1 ORDER BY id", []string{"b"}); !reflect.DeepEqual(got, []int64{1}) {
				t.Errorf("tags @> $1: %v", got)
			}

			// Array values back, with NULL elements and several dimensions.
			var tags []string
			var nums []int32
			if err := c.QueryRow(ctx, "SELECT tags, nums FROM pa WHERE id = 1").Scan(&tags, &nums); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(tags, []string{"a", "b"}) || !reflect.DeepEqual(nums, []int32{1, 2}) {
				t.Errorf("array columns: %v %v", tags, nums)
			}
			var withNull []pgtype.Int8
			if err := c.QueryRow(ctx, "SELECT ARRAY[1, NULL, 3]::int8[]").Scan(&withNull); err != nil {
				t.Fatal(err)
			}
			if len(withNull) != 3 || withNull[1].Valid || withNull[2].Int64 != 3 {
				t.Errorf("NULL element: %v", withNull)
			}
			var grid pgtype.Array[int32]
			if err := c.QueryRow(ctx, "SELECT '{{1,2,3},{4,5,6}}'::int4[]").Scan(&grid); err != nil {
				t.Fatal(err)
			}
			if len(grid.Dims) != 2 || grid.Dims[0].Length != 2 || grid.Dims[1].Length != 3 || grid.Elements[5] != 6 {
				t.Errorf("two dimensions: %+v", grid)
			}

			// Written from slices, read back; the array OIDs of RowDescription.
			id := map[string]int64{"simple": 10, "extended": 11, "describe": 12}[name]
			if _, err := c.Exec(ctx, "INSERT INTO pa (id, name, tags, nums) VALUES ($1, $2, $3, $4)",
				id, name, []string{"p", "q r", ""}, []int32{7, -8}); err != nil {
				t.Fatal(err)
			}
			rows, err := c.Query(ctx, "SELECT tags, nums, array_length(tags, 1) FROM pa WHERE id = $1", id)
			if err != nil {
				t.Fatal(err)
			}
			fds := rows.FieldDescriptions()
			if fds[0].DataTypeOID != 1009 || fds[1].DataTypeOID != 1007 || fds[2].DataTypeOID != pgtype.Int4OID {
				t.Errorf("OIDs %d %d %d, want 1009 1007 23", fds[0].DataTypeOID, fds[1].DataTypeOID, fds[2].DataTypeOID)
			}
			if !rows.Next() {
				t.Fatal(rows.Err())
			}
			var n int32
			if err := rows.Scan(&tags, &nums, &n); err != nil {
				t.Fatal(err)
			}
			rows.Close()
			if !reflect.DeepEqual(tags, []string{"p", "q r", ""}) || !reflect.DeepEqual(nums, []int32{7, -8}) || n != 3 {
				t.Errorf("written arrays back: %q %v %d", tags, nums, n)
			}

			// unnest of a parameter, and a malformed one.
			if got := ids("SELECT x FROM unnest($1::int8[]) AS x ORDER BY x", []int64{5, 4}); !reflect.DeepEqual(got, []int64{4, 5}) {
				t.Errorf("unnest($1): %v", got)
			}
			if _, err := c.Exec(ctx, "SELECT $1::int4[]", "{1,x}"); arrayErrCode(err) != "22P02" {
				t.Errorf("malformed array parameter: %v", err)
			}
		})
	}
}

// arrayErrCode is the SQLSTATE of a server error, "" for other errors.
func arrayErrCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}
