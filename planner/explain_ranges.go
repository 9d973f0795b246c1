package planner

import "fmt"

// ExplainMaxRanges is how many ranges EXPLAIN lists before it cuts the
// list with "... and N more".
const ExplainMaxRanges = 100

// ExplainReadHeader is the line EXPLAIN shows for a table read (design §6):
// `ranges=N partitions=K/T`, K the shards read of T.
func ExplainReadHeader(ranges, partitions, totalPartitions int) string {
	return fmt.Sprintf("ranges=%d partitions=%d/%d", ranges, partitions, totalPartitions)
}

// ExplainRanges renders the ranges one per line as `[LOWER .. UPPER)`; past
// maxLines ranges (ExplainMaxRanges when < 1) the rest is counted on a
// last line "... and N more".
func ExplainRanges(rs Ranges, maxLines int) []string {
	if maxLines < 1 {
		maxLines = ExplainMaxRanges
	}
	n := min(len(rs), maxLines)
	out := make([]string, 0, n+1)
	for _, r := range rs[:n] {
		out = append(out, r.String())
	}
	if len(rs) > n {
		out = append(out, fmt.Sprintf("... and %d more", len(rs)-n))
	}
	return out
}
