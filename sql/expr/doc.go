// Package expr holds PivotDB's scalar expressions: typed trees built from
// TiDB's AST, evaluated row by row, and read by the planner (key-range
// inference pattern-matches the node structs).
//
// # Layers
//
//   - Nodes (expr.go and one file per kind): ColumnRef, Const, Param,
//     Compare, RowCompare, In, RowIn, And, Or, Not, IsNull, IsTruth, Arith,
//     Unary, Concat, Like, Case, Coalesce, Cast and Func. Every node knows
//     its Type and evaluates itself; Children, Walk and Transform traverse
//     trees (walk.go). Nodes defined elsewhere (subqueries) join in by
//     implementing Node.
//   - Builder (build.go, build_func.go, coerce.go) translates an
//     ast.ExprNode: it resolves columns through a Scope, types every node,
//     gives untyped literals and parameters the type their context asks for
//     (recording parameter types for Describe), type-checks operators and
//     functions (42883 at build time, as PostgreSQL), and folds constant
//     subtrees. BuildBool is for conditions, BuildAssign for values stored
//     into columns.
//   - Functions (func*.go) are a registry of scalar functions, each with a
//     build-time signature check and an evaluator; FunctionNames lists
//     them.
//   - Aggregates (agg.go): AggSpec describes a call and makes one AggFunc
//     accumulator per group; Builder.BuildAgg builds one from the AST.
//     The executor evaluates a row's input with AggSpec.Input (argument,
//     FILTER, ORDER BY keys) and feeds it with AggSpec.Add; with ORDER BY
//     the accumulator collects the inputs and sorts them when the result
//     is asked for (aggorder.go).
//
// # Lifecycle and invariants
//
// A tree is built once per statement (and kept with a prepared statement)
// and then evaluated by many goroutines at once: Eval never modifies a
// node, and nodes hold no per-evaluation state. Transform copies instead of
// mutating. Only Const and Param leaves can have type Unknown (an untyped
// string literal or parameter); every other node's type is decided at
// build time, and a non-NULL value a node returns is of its type's family
// (TestRandomExpressions checks this). Build depth is bounded by MaxDepth
// (54001), which also bounds the recursion of Eval.
//
// # Semantics (decisions)
//
//   - Three-valued logic; comparisons and arithmetic with NULL are NULL;
//     AND/OR do not evaluate the right side when the left decides.
//   - Integer arithmetic stays integer and keeps PostgreSQL's widths: int2
//     op int2 is int2, int4 op int4 is int4, mixed widths give the wider,
//     and a result that does not fit is 22003 ("smallint out of range",
//     "integer out of range", "bigint out of range"), detected by exact
//     sign-magnitude arithmetic (intmath.go), never by wrapping. YQL's
//     Int8 and unsigned families follow YDB-like rules (inttypes.go):
//     unsigned op unsigned is the wider unsigned family (Uint32 1 - 2 is
//     22003 "Uint32 out of range"), signed op unsigned the narrowest
//     signed family holding both ranges (Int32 op Uint32 is Int64; with
//     Uint64 it is Int64), -x keeps a signed family and doubles an
//     unsigned one into a signed family, abs keeps the family. A
//     non-negative integer literal next to an unsigned operand of 32 or
//     64 bits takes its family, so `u - 1` and farm_hash(k) % 16 stay
//     unsigned. / truncates toward zero, % takes the dividend's sign.
//     Division or modulo by zero is NULL for every numeric type, never an
//     error (design §3.1; SQLite agrees).
//   - Any Float or Double operand makes the result Double (also Float op
//     Float), IEEE (overflow gives Infinity). Decimal op integer is
//     Decimal, computed exactly with apd; decimal division rounds to
//     PostgreSQL's scale (at least 16 significant digits). sqrt, exp, ln,
//     log, power and the postgresql dialect's ^ (Builder.CaretPower) on a
//     Decimal argument (and no float) are Decimal at PostgreSQL's result
//     scales, computed with guard digits and rounded half away from zero,
//     again with more when the guard cannot decide (func_numeric.go).
//     log(b, x) takes no float (42883, as PostgreSQL has it in numeric
//     only); cbrt is glibc's algorithm, since PostgreSQL returns the C
//     library's digits. to_char(number, picture) and to_number follow
//     PostgreSQL's formatting.c (numfmt.go: the picture parser and the
//     processor; func_tochar.go: how each argument type prepares its
//     digits); to_char of dates and timestamps is func_tochar_dt.go
//     (PostgreSQL's DCH pictures); pgcorpus/ holds PostgreSQL 15.18's
//     answers for 3,900 cases that TestToCharPostgres,
//     TestToCharTimePostgres and TestToNumberPostgres compare.
//   - Literals: integers are Int32 when they fit (PostgreSQL's int4, so
//     2147483647 + 1 is 22003), then Int64, then Uint64, Decimal beyond; numbers with a point are exact Decimal as in PostgreSQL,
//     numbers with an exponent are Double, quoted strings are untyped, so
//     `date_col = '2024-01-01'` parses the date at build time (22007 for a
//     bad one) and `int_col = 'x'` fails with 22P02.
//   - Comparisons across numeric families are exact (types.Compare);
//     incomparable families (integer = text) are 42883 at build time.
//     Row equality (a, b) = (1, 2) becomes (a = 1) AND (b = 2); row
//     ordering uses RowCompare. BETWEEN becomes (x >= a) AND (x <= b).
//   - || propagates NULL and renders non-strings as text; concat() skips
//     NULLs (PostgreSQL). TiDB parses both as a call of "concat"; the
//     operator is told apart by its position (isPipes).
//   - Time: Date/Datetime/Timestamp ± Interval is Timestamp (months first,
//     clamped to the month's end, then days, then time; a timestamptz's
//     months and days move its wall clock in the session's zone, so such
//     sums are never folded); time − time is Interval (whole days as
//     days, as PostgreSQL's timestamp_mi); Interval ± Interval field by
//     field, Interval × or ÷ a number as interval_mul (fractions of months
//     spill into days, of days into time); Date ± integer days is Date.
//     An infinite time plus anything stays infinite; minus one is 22008.
//     func_datetime.go: justify_*, age, date_part, EXTRACT (numeric) and
//     isfinite. DateStyle and IntervalStyle (Context.Style) make casts of
//     times to text and of text to dates (field order) and intervals
//     (sql_standard's sign) session-dependent, like the zone (zone.go).
//   - Time of day (PostgreSQL's time, timeofday.go): time ± interval
//     moves the clock by the interval's time part and wraps at midnight,
//     time − time is an Interval, date ± time is a Timestamp;
//     timestamptz::time and 'now'::time read the session's zone;
//     date_part, EXTRACT, make_time and localtime. timetz (types/timetz.go)
//     ± interval keeps its offset; time, timestamptz and text without an
//     offset become timetz in the session's zone (zoneDependent), so those
//     casts are not folded; current_time is the statement's start as a
//     timetz; EXTRACT adds timezone, timezone_hour and timezone_minute.
//   - CASE/COALESCE/IF/GREATEST/LEAST unify their branches with
//     CommonType. +x is x for every type, as in SQLite.
//   - Clock functions read Context.Now and, like random(), are
//     non-deterministic: never folded, rejected by computed columns
//     (IsDeterministic).
//   - Aggregates: see agg.go (sum of Int8/16/32 is Int64, sum of Int64 is
//     Decimal, as PostgreSQL's sum(int8) is numeric; sum of unsigned is
//     Uint64 with 22003 on overflow of the final sum; avg of integers is
//     Double).
//   - Arrays (array.go, func_array.go): ARRAY[...] takes its elements'
//     common type (arrays as elements add a dimension); an untyped
//     literal or parameter next to an array operator becomes that array
//     type ('{1,2}', = ANY($1)); x op ANY/ALL, @>, <@ and && compare
//     elements with the scalar rules; || is array_cat, array_append or
//     array_prepend by the operand types; subscripts are NULL out of range.
//     Where an array is expected, a text value is read as the text form of
//     one (the system catalog's array columns are still text).
//   - Text (Utf8, Json) is valid UTF-8 without NUL: literals, parameters
//     and casts from bytes that are not fail with 22021 ("invalid byte
//     sequence for encoding "UTF8": 0x00"), as in PostgreSQL
//     (types.CheckText).
//
// # Debugging
//
// testdata/* are datadriven files: each line is an expression over the
// fixture row of helpers_test.go, with its value and type (or SQLSTATE);
// run `go test ./sql/expr -run DataDriven -rewrite` and read the diff.
// The corpus tests run the simple queries of SQLite's sqllogictest files
// (in /work/shared/sqllogictest when present) on this package alone and
// compare with SQLite's answers; a mismatch there names the file and line.
package expr
