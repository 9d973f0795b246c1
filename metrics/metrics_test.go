package metrics

import "testing"

func TestParseTag(t *testing.T) {
	for _, tc := range []struct {
		tag, kind string
		rows      int64
		hasRows   bool
	}{
		{"INSERT 0 5", "INSERT", 5, true},
		{"UPDATE 2", "UPDATE", 2, true},
		{"DELETE 0", "DELETE", 0, true},
		{"SELECT 10", "SELECT", 10, true},
		{"CREATE TABLE", "CREATE TABLE", 0, false},
		{"BEGIN", "BEGIN", 0, false},
		{"", "unknown", 0, false},
	} {
		kind, rows, hasRows := parseTag(tc.tag)
		if kind != tc.kind || rows != tc.rows || hasRows != tc.hasRows {
			t.Errorf("parseTag(%q) = %q, %d, %v; want %q, %d, %v", tc.tag, kind, rows, hasRows, tc.kind, tc.rows, tc.hasRows)
		}
	}
}
