package console

import (
	"context"
	"time"

	"github.com/pivotdb/pivotdb/sql"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/types"
)

// query runs one read-only statement in database as the built-in user, the
// way a client would, and returns its rows.
func query(e *sql.Engine, database, text string) ([][]types.Value, error) {
	s, err := e.NewSession(database, catalog.BootstrapUser)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s.BeginImplicit()
	defer s.Sync()
	p, err := s.Prepare(ctx, text, nil)
	if err != nil {
		return nil, err
	}
	res, err := s.Execute(ctx, p, nil)
	if err != nil {
		s.FailTransaction()
		return nil, err
	}
	defer res.Close()
	var out [][]types.Value
	for {
		row, err := res.Next(ctx)
		if err != nil {
			s.FailTransaction()
			return nil, err
		}
		if row == nil {
			return out, nil
		}
		out = append(out, append([]types.Value(nil), row...))
	}
}

// databases lists the databases' names.
func databases(e *sql.Engine) ([]string, error) {
	rows, err := query(e, catalog.DefaultDatabase, "SELECT datname FROM pg_catalog.pg_database ORDER BY datname")
	if err != nil {
		return nil, err
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r[0].Str()
	}
	return out, nil
}

// shardRow is one row of sys.partitions.
type shardRow struct {
	Table          string
	Index, ShardID int64
	Start, End     string
	Bytes, Rows    types.Value // NULL while a split's counts are pending
	Reads, Writes  int64
	TTLLastRun     types.Value
	TTLErased      int64
	Splits, Merges int64
}

// partitions reads database's sys.partitions.
func partitions(e *sql.Engine, database string) ([]shardRow, error) {
	rows, err := query(e, database, "SELECT table_name, partition_index, shard_id, start_key, end_key, "+
		"data_size_bytes, row_count, reads, writes, ttl_last_run, ttl_rows_erased, splits, merges FROM sys.partitions")
	if err != nil {
		return nil, err
	}
	out := make([]shardRow, len(rows))
	for i, r := range rows {
		out[i] = shardRow{Table: r[0].Str(), Index: r[1].Int(), ShardID: r[2].Int(), Start: r[3].Str(), End: r[4].Str(),
			Bytes: r[5], Rows: r[6], Reads: r[7].Int(), Writes: r[8].Int(), TTLLastRun: r[9], TTLErased: r[10].Int(),
			Splits: r[11].Int(), Merges: r[12].Int()}
	}
	return out, nil
}
