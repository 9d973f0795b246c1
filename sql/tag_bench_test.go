package sql

import "testing"

// BenchmarkResultTag measures the command tag of a SELECT's result, which
// the server asks every query for (it was fmt.Sprintf; issue 23):
//
//	go test ./sql -run '^$' -bench ResultTag
func BenchmarkResultTag(b *testing.B) {
	r := &rowsResult{count: 1}
	b.ReportAllocs()
	for b.Loop() {
		if tag := r.Tag(); tag != "SELECT 1" {
			b.Fatal(tag)
		}
	}
}

func TestResultTags(t *testing.T) {
	for _, c := range []struct {
		r    *rowsResult
		want string
	}{
		{&rowsResult{}, "SELECT 0"},
		{&rowsResult{count: 1}, "SELECT 1"},
		{&rowsResult{count: 1234567}, "SELECT 1234567"},
		{&rowsResult{count: 3, verb: "FETCH 3"}, "FETCH 3"},
	} {
		if got := c.r.Tag(); got != c.want {
			t.Errorf("Tag() = %q, want %q", got, c.want)
		}
	}
}
