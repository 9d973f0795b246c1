package sessionvars

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// The settings below are the ones PostgreSQL tools, drivers, ORMs and
// regression scripts set. Each either acts in PivotDB or, when set, raises a
// NOTICE saying what it does not change (Notice): nothing is accepted and
// silently ignored.
//
// Acting: work_mem (the statement's memory limit for sorts, grouping,
// DISTINCT and hash joins, capped by --max-query-memory), enable_indexscan
// (off: no secondary index reads), enable_hashjoin (off: equi-joins run as
// nested loops, correlated EXISTS / IN run per outer row), client_min_messages (notices below the level are not
// sent), lock_timeout (lock waits give up with 55P03), idle_session_timeout
// (the server ends a session idle outside a transaction, 57P05),
// default_with_oids (only off exists).
var toolSpecs = map[string]*spec{
	"work_mem":                       {def: "4MB", normalize: normalizeMemory},
	"maintenance_work_mem":           {def: "64MB", normalize: normalizeMemory},
	"effective_cache_size":           {def: "4GB", normalize: normalizeMemory},
	"synchronous_commit":             {def: "on", normalize: oneOf("on", "off", "local", "remote_write", "remote_apply")},
	"client_min_messages":            {def: "notice", normalize: oneOf("debug5", "debug4", "debug3", "debug2", "debug1", "log", "notice", "warning", "error")},
	"lock_timeout":                   {def: "0", normalize: normalizeDuration},
	"idle_session_timeout":           {def: "0", normalize: normalizeDuration},
	"random_page_cost":               {def: "4", normalize: normalizeCost},
	"seq_page_cost":                  {def: "1", normalize: normalizeCost},
	"cpu_tuple_cost":                 {def: "0.01", normalize: normalizeCost},
	"jit":                            {def: "off", normalize: normalizeBool},
	"row_security":                   {def: "on", normalize: normalizeBool},
	"default_with_oids":              {def: "off", normalize: normalizeWithOids},
	"xmloption":                      {def: "content", normalize: oneOf("content", "document")},
	"enable_seqscan":                 {def: "on", normalize: normalizeBool},
	"enable_indexscan":               {def: "on", normalize: normalizeBool},
	"enable_indexonlyscan":           {def: "on", normalize: normalizeBool},
	"enable_bitmapscan":              {def: "on", normalize: normalizeBool},
	"enable_tidscan":                 {def: "on", normalize: normalizeBool},
	"enable_hashjoin":                {def: "on", normalize: normalizeBool},
	"enable_nestloop":                {def: "on", normalize: normalizeBool},
	"enable_mergejoin":               {def: "on", normalize: normalizeBool},
	"enable_hashagg":                 {def: "on", normalize: normalizeBool},
	"enable_sort":                    {def: "on", normalize: normalizeBool},
	"enable_incremental_sort":        {def: "on", normalize: normalizeBool},
	"enable_material":                {def: "on", normalize: normalizeBool},
	"enable_memoize":                 {def: "on", normalize: normalizeBool},
	"enable_partition_pruning":       {def: "on", normalize: normalizeBool},
	"enable_partitionwise_join":      {def: "off", normalize: normalizeBool},
	"enable_partitionwise_aggregate": {def: "off", normalize: normalizeBool},
	"enable_parallel_append":         {def: "on", normalize: normalizeBool},
	"enable_parallel_hash":           {def: "on", normalize: normalizeBool},
	"enable_gathermerge":             {def: "on", normalize: normalizeBool},
	"enable_async_append":            {def: "on", normalize: normalizeBool},
	// pg_dump sets these, and its dumps set them when restored.
	"synchronize_seqscans":        {def: "on", normalize: normalizeBool},
	"check_function_bodies":       {def: "on", normalize: normalizeBool},
	"default_tablespace":          {def: ""},
	"default_table_access_method": {def: "heap"},
}

func init() {
	for name, s := range toolSpecs {
		specs[name] = s
	}
}

// noOpReason says, per setting that does not act, why: the NOTICE a SET of
// it raises.
var noOpReason = map[string]string{
	"synchronous_commit":             "commits are always durable: PivotDB syncs every commit to its log before COMMIT returns",
	"maintenance_work_mem":           "index builds and backfills stream rows in batches and hold no sort of their own",
	"effective_cache_size":           "PivotDB's planner has no cost model; access paths follow keys and indexes",
	"random_page_cost":               "PivotDB's planner has no cost model; access paths follow keys and indexes",
	"seq_page_cost":                  "PivotDB's planner has no cost model; access paths follow keys and indexes",
	"cpu_tuple_cost":                 "PivotDB's planner has no cost model; access paths follow keys and indexes",
	"jit":                            "PivotDB has no JIT compilation of expressions",
	"row_security":                   "PivotDB has no row security policies, so no query is affected",
	"xmloption":                      "PivotDB has no xml type",
	"enable_seqscan":                 "a table is read in full only when neither its primary key nor an index bounds the condition, and then there is no other path",
	"enable_indexonlyscan":           "PivotDB reads the table's row for every index entry (no index-only scans); use enable_indexscan",
	"enable_bitmapscan":              "PivotDB has no bitmap scans",
	"enable_tidscan":                 "PivotDB has no TID scans",
	"enable_nestloop":                "PivotDB joins by nested loop only when the condition has no equality to hash on, and then there is no other method",
	"enable_mergejoin":               "PivotDB has no merge joins",
	"enable_hashagg":                 "PivotDB always groups by hashing",
	"enable_sort":                    "PivotDB sorts whenever ORDER BY is not given by the key order; there is no other method",
	"enable_incremental_sort":        "PivotDB has no incremental sort",
	"enable_material":                "PivotDB materializes only a join's inner side, which it always needs",
	"enable_memoize":                 "PivotDB has no memoize step",
	"enable_partition_pruning":       "PivotDB always prunes shards to the key ranges a query reads",
	"enable_partitionwise_join":      "PivotDB has no partitionwise joins",
	"enable_partitionwise_aggregate": "PivotDB has no partitionwise aggregation",
	"enable_parallel_append":         "PivotDB has no parallel append",
	"enable_parallel_hash":           "PivotDB builds each hash table in one worker",
	"enable_gathermerge":             "PivotDB has no gather merge",
	"enable_async_append":            "PivotDB has no async append",
	"synchronize_seqscans":           "PivotDB's table scans read shards through iterators of their own, which do not share a position",
	"check_function_bodies":          "PivotDB always checks the body of a SQL function when it is created",
	"default_tablespace":             "PivotDB has no tablespaces: every table lives in the data directory",
	"default_table_access_method":    "PivotDB stores every table in its LSM tree, whatever access method is named",
}

// Notice is the NOTICE a SET of name (lower case) to value (normalised)
// raises: "" for settings that act, otherwise what the setting does not
// change in PivotDB.
func Notice(name, value string) string {
	if r, ok := noOpReason[name]; ok {
		return fmt.Sprintf("%s is accepted but changes nothing: %s", name, r)
	}
	if name == "search_path" && !searchPathHasPublic(value) {
		// PostgreSQL would then not find unqualified tables of public.
		return "search_path without public changes nothing: PivotDB has only schema public (and pg_catalog), and unqualified names are looked up there whatever search_path says"
	}
	return ""
}

// searchPathHasPublic reports whether a search_path lists public (or
// "$user", which PostgreSQL skips when no such schema exists).
func searchPathHasPublic(v string) bool {
	for _, p := range strings.Split(v, ",") {
		if strings.EqualFold(strings.Trim(strings.TrimSpace(p), `"`), "public") {
			return true
		}
	}
	return false
}

// normalizeBool accepts PostgreSQL's boolean spellings and shows on/off.
func normalizeBool(v string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "on", "true", "yes", "1", "t", "y", "tr", "tru", "ye":
		return "on", nil
	case "off", "false", "no", "0", "f", "n", "of", "fa", "fal", "fals":
		return "off", nil
	}
	return "", sqlerr.New(sqlerr.InvalidParameterValue, "parameter requires a Boolean value: %q", v)
}

func normalizeWithOids(v string) (string, error) {
	b, err := normalizeBool(v)
	if err != nil {
		return "", err
	}
	if b == "on" {
		return "", sqlerr.New(sqlerr.FeatureNotSupported, "tables declared WITH OIDS are not supported")
	}
	return b, nil
}

func normalizeCost(v string) (string, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || f < 0 {
		return "", sqlerr.New(sqlerr.InvalidParameterValue, "invalid value %q: a non-negative number is expected", v)
	}
	return strconv.FormatFloat(f, 'g', -1, 64), nil
}

// memUnits are PostgreSQL's memory units, in kB.
var memUnits = []struct {
	name string
	kb   int64
}{{"TB", 1 << 30}, {"GB", 1 << 20}, {"MB", 1 << 10}, {"kB", 1}}

// normalizeMemory parses a memory setting as PostgreSQL does (a number of
// kB, or a number with kB, MB, GB or TB; at least 64kB) and shows it in the
// largest unit that divides it, as SHOW does ("4MB").
func normalizeMemory(v string) (string, error) {
	s := strings.TrimSpace(v)
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	bad := sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for a memory setting: %q", v)
	if err != nil {
		return "", bad
	}
	unit := strings.TrimSpace(s[i:])
	mul := int64(0)
	if unit == "" {
		mul = 1
	}
	for _, u := range memUnits {
		if strings.EqualFold(unit, u.name) {
			mul = u.kb
		}
	}
	if mul == 0 {
		bad.Hint = `Valid units for this parameter are "B", "kB", "MB", "GB", and "TB".`
		return "", bad
	}
	kb := n * mul
	if kb/mul != n || kb > 1<<31-1 {
		return "", sqlerr.New(sqlerr.InvalidParameterValue, "%s is outside the valid range for a memory setting (64kB .. 2147483647kB)", v)
	}
	if kb < 64 {
		return "", sqlerr.New(sqlerr.InvalidParameterValue, "%s is outside the valid range for a memory setting (64kB .. 2147483647kB)", v)
	}
	return FormatKB(kb), nil
}

// FormatKB shows kb in the largest unit that divides it.
func FormatKB(kb int64) string {
	for _, u := range memUnits {
		if kb%u.kb == 0 {
			return strconv.FormatInt(kb/u.kb, 10) + u.name
		}
	}
	return strconv.FormatInt(kb, 10) + "kB"
}

// memoryBytes is a normalised memory setting in bytes.
func memoryBytes(v string) int64 {
	for _, u := range memUnits {
		if n, ok := strings.CutSuffix(v, u.name); ok {
			k, _ := strconv.ParseInt(n, 10, 64)
			return k * u.kb * 1024
		}
	}
	return 0
}

// WorkMemDefault is work_mem's default for a server whose statements may
// hold maxQueryMemory bytes (0: no limit → "").
func WorkMemDefault(maxQueryMemory int64) string {
	kb := maxQueryMemory / 1024
	if kb < 64 || kb > 1<<31-1 {
		return ""
	}
	return FormatKB(kb)
}

// WorkMem is work_mem in bytes.
func (v *Vars) WorkMem() int64 { return memoryBytes(v.values["work_mem"]) }

// Enabled reports whether a boolean setting (enable_indexscan, ...) is on.
func (v *Vars) Enabled(name string) bool { return v.values[name] == "on" }

// LockTimeout is lock_timeout (0: wait forever).
func (v *Vars) LockTimeout() time.Duration { return v.timeouts.lock }

// IdleSessionTimeout is idle_session_timeout (0: forever).
func (v *Vars) IdleSessionTimeout() time.Duration { return v.timeouts.idleSession }

// severityRank orders client_min_messages levels and notice severities.
var severityRank = map[string]int{
	"debug5": 0, "debug4": 1, "debug3": 2, "debug2": 3, "debug1": 4, "debug": 4,
	"log": 5, "info": 6, "notice": 7, "warning": 8, "error": 9,
}

// SendNotice reports whether a notice of severity ("NOTICE", "WARNING")
// reaches the client under client_min_messages. INFO always does, as in
// PostgreSQL (VACUUM VERBOSE's report).
func (v *Vars) SendNotice(severity string) bool {
	r, ok := severityRank[strings.ToLower(severity)]
	if !ok || strings.EqualFold(severity, "info") {
		return true
	}
	return r >= severityRank[v.values["client_min_messages"]]
}
