package tablesettings

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// PostgreSQL's heap storage parameters (CREATE TABLE ... WITH (fillfactor
// = 100), as pgbench -i and pg_dump of a PostgreSQL database write them)
// tune the layout of heap pages, TOAST and autovacuum, none of which a
// table in an LSM tree has. They are the one exception to "nothing is
// accepted and ignored": a value PostgreSQL would take is accepted, with a
// NOTICE saying that it changes nothing, and is not kept (SHOW CREATE
// TABLE and pg_class.reloptions do not list it). A value PostgreSQL would
// refuse is refused as PostgreSQL refuses it (22023).

// heapParamKind is the type of a heap parameter's value.
type heapParamKind int

const (
	heapInt heapParamKind = iota
	heapFloat
	heapBool
	heapEnum
)

// heapParam describes one storage parameter: its type, PostgreSQL's
// bounds (for heapEnum, the words), and why it changes nothing here.
type heapParam struct {
	kind     heapParamKind
	min, max float64
	words    []string
	reason   string
}

const (
	reasonPages     = "PivotDB stores a table in an LSM tree (Pebble), which has no heap pages to leave free space in"
	reasonToast     = "PivotDB has no TOAST tables: long values are stored in the row"
	reasonAutovac   = "PivotDB has no autovacuum: the LSM's compactions drop deleted and overwritten data (VACUUM compacts a table at once)"
	reasonParallel  = "PivotDB chooses its scan workers per shard, not per table"
	reasonCatalog   = "PivotDB has no logical decoding"
	reasonLogVacuum = "PivotDB has no autovacuum to log"
)

var heapParams = map[string]heapParam{
	"fillfactor":                            {kind: heapInt, min: 10, max: 100, reason: reasonPages},
	"toast_tuple_target":                    {kind: heapInt, min: 128, max: 8160, reason: reasonToast},
	"parallel_workers":                      {kind: heapInt, min: 0, max: 1024, reason: reasonParallel},
	"autovacuum_enabled":                    {kind: heapBool, reason: reasonAutovac},
	"vacuum_index_cleanup":                  {kind: heapEnum, words: []string{"auto", "on", "off", "true", "false", "yes", "no", "1", "0"}, reason: reasonAutovac},
	"vacuum_truncate":                       {kind: heapBool, reason: reasonPages},
	"autovacuum_vacuum_threshold":           {kind: heapInt, min: 0, max: 2147483647, reason: reasonAutovac},
	"autovacuum_vacuum_scale_factor":        {kind: heapFloat, min: 0, max: 100, reason: reasonAutovac},
	"autovacuum_vacuum_insert_threshold":    {kind: heapInt, min: -1, max: 2147483647, reason: reasonAutovac},
	"autovacuum_vacuum_insert_scale_factor": {kind: heapFloat, min: 0, max: 100, reason: reasonAutovac},
	"autovacuum_analyze_threshold":          {kind: heapInt, min: 0, max: 2147483647, reason: reasonAutovac},
	"autovacuum_analyze_scale_factor":       {kind: heapFloat, min: 0, max: 100, reason: reasonAutovac},
	"autovacuum_vacuum_cost_delay":          {kind: heapFloat, min: -1, max: 100, reason: reasonAutovac},
	"autovacuum_vacuum_cost_limit":          {kind: heapInt, min: -1, max: 10000, reason: reasonAutovac},
	"autovacuum_freeze_min_age":             {kind: heapInt, min: 0, max: 1000000000, reason: reasonAutovac},
	"autovacuum_freeze_max_age":             {kind: heapInt, min: 100000, max: 2000000000, reason: reasonAutovac},
	"autovacuum_freeze_table_age":           {kind: heapInt, min: 0, max: 2000000000, reason: reasonAutovac},
	"autovacuum_multixact_freeze_min_age":   {kind: heapInt, min: 0, max: 1000000000, reason: reasonAutovac},
	"autovacuum_multixact_freeze_max_age":   {kind: heapInt, min: 10000, max: 2000000000, reason: reasonAutovac},
	"autovacuum_multixact_freeze_table_age": {kind: heapInt, min: 0, max: 2000000000, reason: reasonAutovac},
	"log_autovacuum_min_duration":           {kind: heapInt, min: -1, max: 2147483647, reason: reasonLogVacuum},
	"user_catalog_table":                    {kind: heapBool, reason: reasonCatalog},
}

// heapParameter checks a PostgreSQL heap storage parameter; ok is false
// when st names none. The notice says that it changes nothing.
func heapParameter(st parser.Setting) (n Notice, ok bool, err error) {
	name := strings.ToLower(st.Name)
	p, ok := heapParams[name]
	if !ok {
		return Notice{}, false, nil
	}
	v := st.Value
	bad := func() error {
		return errorf(codeValue, v.Pos, "invalid value for %s option \"%s\": %s", map[heapParamKind]string{
			heapInt: "integer", heapFloat: "floating point", heapBool: "boolean", heapEnum: "enum"}[p.kind], name, v.Text)
	}
	switch p.kind {
	case heapInt, heapFloat:
		if v.Kind != parser.ValueNumber && v.Kind != parser.ValueString {
			return Notice{}, true, bad()
		}
		x, perr := strconv.ParseFloat(v.Str, 64)
		if perr != nil || p.kind == heapInt && x != float64(int64(x)) {
			return Notice{}, true, bad()
		}
		if x < p.min || x > p.max {
			e := errorf(codeValue, v.Pos, "value %s out of bounds for option \"%s\"", v.Str, name)
			return Notice{}, true, withDetail(e, "Valid values are between \"%s\" and \"%s\".", fmtBound(p, p.min), fmtBound(p, p.max))
		}
	case heapBool:
		if !isPGBool(v) {
			return Notice{}, true, bad()
		}
	case heapEnum:
		if !isWord(v, p.words) {
			return Notice{}, true, bad()
		}
	}
	return Notice{Code: sqlerr.SuccessfulCompletion,
		Message: fmt.Sprintf("storage parameter %s is accepted but changes nothing: %s", name, p.reason)}, true, nil
}

func fmtBound(p heapParam, x float64) string {
	if p.kind == heapInt {
		return strconv.FormatInt(int64(x), 10)
	}
	return strconv.FormatFloat(x, 'f', -1, 64)
}

// isPGBool reports whether a value is one of PostgreSQL's boolean
// spellings (parse_bool: true, false, yes, no or a prefix of one, on,
// off or "of", 1, 0).
func isPGBool(v parser.Value) bool {
	s := strings.ToLower(v.Str)
	switch v.Kind {
	case parser.ValueNumber:
		return s == "1" || s == "0"
	case parser.ValueIdent, parser.ValueString:
		switch s {
		case "on", "off", "of", "1", "0":
			return true
		}
		for _, w := range []string{"true", "false", "yes", "no"} {
			if s != "" && strings.HasPrefix(w, s) {
				return true
			}
		}
	}
	return false
}

func isWord(v parser.Value, words []string) bool {
	for _, w := range words {
		if strings.EqualFold(v.Str, w) {
			return true
		}
	}
	return false
}
