// Package parser is PivotDB's dialect front: it reads a script in PivotDB's
// YQL-like SQL, as clients send it over the PostgreSQL wire protocol, and
// returns one Statement per statement.
//
// # API
//
//	func Parse(sql string) ([]Statement, error)
//	func ParseDialect(sql string, d Dialect) ([]Statement, error)
//	func ColumnType(col *ast.ColumnDef) (types.Type, error)
//	func CastTarget(call *ast.FuncCallExpr) (expr ast.ExprNode, t types.Type, ok bool, err error)
//
// A Statement holds either TiDB's AST (ast.StmtNode, built with the
// test_driver value nodes, which this package imports) or exactly one of
// the YQL-only statement types that TiDB's grammar cannot express
// (also TRUNCATE of several tables, VACUUM / ANALYZE (vacuum.go), the
// SEQUENCE statements, CREATE / ALTER / DROP TYPE of enums (enumtype.go)
// and CREATE / DROP FUNCTION (function.go)):
// AlterSettings (ALTER TABLE t SET/RESET), SetVar, ShowVar, ResetVar,
// TxnStmt, Deallocate, Discard and CursorStmt (DECLARE, FETCH, MOVE,
// CLOSE: cursor.go; DECLARE's query goes to TiDB alone and comes back as
// the Statement's AST beside the CursorStmt). CREATE TABLE ... WITH (...) settings come
// back in Statement.With next to the AST. Parameters are described by
// NumParams and ParamIndex (see Statement).
//
// Casts in every spelling reach the AST as a call of pivot_cast(expr,
// 'Type'); CastTarget recognises it. Column types reach it as a BLOB column
// whose FieldType carries the real type; ColumnType reads it. Type names
// are checked with types.ParseTypeName while parsing, so both functions
// only fail on ASTs that did not come from Parse.
//
// # Layers
//
//	script ──scanner──▶ statements of tokens ──┬─▶ YQL-only parsers (session.go, txn.go, settings.go)
//	        (lexer.go,                         │
//	         scan.go)                          └─▶ rewriter ──▶ TiDB parser ──▶ post-processing
//	                                               (rewrite.go,  (parse.go)      (param order,
//	                                                ddl.go)                       column types)
//
// Before the rewrite, PostgreSQL forms TiDB's grammar lacks are taken off
// the token list into the Statement: EXPLAIN's option list (explain.go),
// CREATE TABLE AS's WITH [NO] DATA and TEMP / ON COMMIT (createas.go);
// SELECT ... INTO name is re-spelled as CREATE TABLE name AS SELECT and
// parsed again (selectinto.go); the data-modifying queries of a top-level
// WITH become statements of their own in Statement.WithDML (with_dml.go);
// a query's top-level locking clauses (FOR UPDATE | NO KEY UPDATE | SHARE |
// KEY SHARE [OF t] [NOWAIT | SKIP LOCKED], several) and CockroachDB's AS OF
// SYSTEM TIME expr go to Statement.Locking and Statement.AsOf (locking.go;
// the expression is parsed by TiDB on its own, parameters refused; AS OF
// SYSTEM TIME below the top level is 42601 as in CockroachDB). BEGIN and SET
// TRANSACTION take AS OF SYSTEM TIME as a mode (TxnStmt.AsOf).
//
// The lexer knows PostgreSQL's and YQL's quoting: '...' standard strings
// (a doubled quote is a quote, backslash is ordinary), E'...' and "..." strings with
// C-style escapes (\n \t \\ \' \" \xHH \ooo \uXXXX \UXXXXXXXX), $$...$$ and
// $tag$...$tag$ dollar quotes, `backtick` identifiers, $n parameters, --
// comments and /* */ comments, which nest as in PostgreSQL. The scanner
// splits the script at top-level ';', drops empty statements, matches
// parentheses and enforces the complexity limits below.
//
// The rewriter (see the rewriter type) turns each remaining statement into
// text that TiDB's MySQL grammar accepts, parsed with
// NO_BACKSLASH_ESCAPES and PIPES_AS_CONCAT:
//
//   - every string literal is written as a standard '...' literal, so any
//     byte survives (including NUL and invalid UTF-8);
//   - $n becomes ?, and ParamIndex records n for each marker;
//   - expr::type (chains, multiword and parameterised names) and
//     CAST(expr AS type) become pivot_cast(expr, 'Type'), where expr is
//     the preceding primary: literal, parameter, identifier chain,
//     parenthesised group or function call;
//   - YQL typed literals Type("...") (Interval, Timestamp, Date, Datetime,
//     the integer types, Float, Double, Utf8, String, Json, Bool, and
//     Decimal("1.5", p, s)) become pivot_cast('...', 'Type'), and so do
//     PostgreSQL's DATE '...', TIME '...', TIMESTAMP '...', TIMESTAMPTZ
//     '...' and INTERVAL '...' (and PostgreSQL's generic form, any
//     built-in type name with its modifiers before a '...' string:
//     int8 '7', numeric(5,2) '1.5', double precision '2'; never a "..."
//     string, an array type or a name only a user type could have:
//     genericLiteralAt), with PostgreSQL's interval field qualifier
//     and precision (INTERVAL '1' DAY, '1-2' YEAR TO MONTH, '1.5'
//     SECOND(0), INTERVAL(3) '...', TIME(0) '...'; MySQL's INTERVAL '1'
//     DAY is spelled and read the same) in the type: pivot_cast('1',
//     'Interval day'); qualifiers are type words too (x::interval hour to
//     minute, a column's interval day to second(3)); MySQL's INTERVAL 1
//     DAY is left to TiDB; EXTRACT(field FROM x) becomes
//     pivot_extract('field', x);
//   - array syntax becomes calls the expression builder knows
//     (ArrayCtorFunc and its siblings): ARRAY[...] pivot_array(...),
//     a[i][j] pivot_array_elem(a, i, j), slices pivot_array_slice, and
//     a @> b, a <@ b, a && b a = pivot_array_contains(b) and so on; array
//     types T[], T ARRAY and List<T> are ordinary type names;
//   - in an UPDATE's SET list, a[i][j] = v becomes a =
//     pivot_array_assign(a, -1, i, j, (v)) and a[lo:hi] = v a =
//     pivot_array_assign(a, mask, lo, hi, (v)) (arrayassign.go; the binder
//     composes several assignments to one column);
//   - unnest(...) [WITH ORDINALITY] in FROM becomes a derived table like
//     generate_series(...) (UnnestFunc);
//   - f(args) after FROM, JOIN, LATERAL or a comma of a FROM list, other
//     than the two below, becomes (SELECT pivot_table_func(`f`(args))),
//     planned by the binder as the rows of a SQL function of the database
//     (TableFunc);
//   - generate_series(...) after FROM, JOIN, LATERAL or a comma of a FROM
//     list becomes the derived table (SELECT pivot_generate_series(...)),
//     planned as a series (lateral when other items precede it);
//   - VALUES (...), (...) as a query (at the start, after "(" or a set
//     operator) becomes MySQL 8's VALUES ROW(...), ROW(...);
//   - GROUPING SETS (...), ROLLUP (...) and CUBE (...) become calls of
//     pivot_grouping_sets (with pivot_grouping_set(...) for each
//     parenthesised set), pivot_rollup and pivot_cube;
//   - SELECT DISTINCT ON (a, b) becomes SELECT DISTINCT
//     pivot_distinct_on(a, b), (the binder takes the item off);
//   - f(...) OVER (...) is one operand, so a cast after it applies to the
//     window function's value;
//   - agg(x, ...) FILTER (WHERE c) becomes agg(CASE WHEN (c) THEN (x) END,
//     ...) and count(*) FILTER (WHERE c) count(CASE WHEN (c) THEN 1 END)
//     (aggregates ignore NULLs); array_agg, which keeps NULLs, gets
//     array_agg(pivot_agg_filter((x), (c))) (aggcall.go);
//   - agg(x, ... ORDER BY k [ASC|DESC] [NULLS FIRST|LAST], ...) becomes
//     agg(pivot_agg_order(x, (k), flags, ...), ...): the keys wrap the
//     first argument, so TiDB still sees its one-argument sum(...);
//   - array_agg, string_agg, bool_and, bool_or, every, count_if and total
//     are plain function calls to TiDB, which takes OVER only after its own
//     aggregates: agg(args) OVER (...) becomes group_concat(
//     pivot_window_agg('agg'), args) OVER (...), and so does agg(DISTINCT
//     x) OVER of TiDB's aggregates (PostgreSQL's 0A000 in the binder);
//   - UPSERT INTO becomes INSERT INTO with Statement.Upsert set;
//   - the ON CONFLICT and RETURNING clauses of a write are cut off
//     (writetail.go): DO UPDATE SET becomes ON DUPLICATE KEY UPDATE, and
//     the DO UPDATE condition and the RETURNING list become statements of
//     their own in the same text ("; SELECT ... FROM DUAL"), which TiDB
//     parses in the same call; Statement.OnConflict and Returning hold them;
//   - nextval, currval, setval and lastval become pivot_nextval, ...
//     (TiDB's grammar has its own NEXTVAL(table));
//   - serial types and GENERATED ... AS IDENTITY become the integer type,
//     recorded in Statement.Identities (identity.go);
//   - column types in CREATE TABLE and ALTER TABLE ADD/MODIFY/CHANGE become
//     BLOB COMMENT 'pivot:<Type>'; the WITH clause is cut off and parsed
//     here;
//   - == becomes =, and the reserved words key, index, order and group are
//     backtick-quoted where they are column names (see identText).
//
// The literal-VALUES fast path (values.go): an INSERT, UPSERT or REPLACE
// INTO name [(columns)] VALUES whose rows hold only literals (numbers with
// an optional sign, strings, NULL, TRUE, FALSE, DEFAULT, $n, each with at
// most one ::type) is not handed to TiDB whole: the rows are read straight
// into Statement.Values (typed as TiDB's lexer types the same text) and TiDB
// parses the statement with VALUES () in their place. Statement.ParamIndex
// then covers only the markers TiDB saw; NumParams counts all. The binder
// builds the rows with expr.Builder.BuildLiteral, which gives the
// expressions and errors (positions included) that the full path gives;
// sql/bind's TestLiteralValuesMatchFullParse compares the two on random
// statements, ParseFullPath being the path without it. Any other item (an
// expression, adjacent strings, 0x.., a typed literal, a reg cast) sends
// the whole statement down the full path. A 1,000-row INSERT of literals
// parses and binds in about a quarter of the CPU time
// (BenchmarkInsertLiterals).
//
// The rewriter records, for every piece of output, the original token it
// came from (offsetmap.go). TiDB's syntax errors name the rest of its input
// after the offending token; that gives an offset in the rewritten text,
// which maps back to a token of the original script.
//
// # Errors
//
// Every error is a *sqlerr.Error with a SQLSTATE. Syntax errors are 42601
// and read like PostgreSQL's: `syntax error at or near "FROM"`, `syntax
// error at end of input` (`at or near ";"` when the statement was ended by
// a semicolon), `unterminated quoted string at or near "'abc"`. Position is
// the 1-based character (not byte) offset in the whole script. Unknown type
// names are 42704 `type "foo" does not exist`, bad
// escapes 22025, $0 42P02. A script with an error anywhere yields no
// statements.
//
// # Limits
//
// Parsing is linear in the script and never recurses deeper than the
// parenthesis nesting: parentheses nest at most 1000 deep, and an estimate
// of the AST depth (operators chained without parentheses, summed along the
// nesting path) is at most 100000; beyond either Parse returns 54001
// "statement too complex" before TiDB runs. A 10 MB statement of a
// reasonable shape (a long VALUES list, a big string) parses in seconds,
// almost all of it in TiDB (a VALUES list of literals takes the fast path
// above and never reaches TiDB).
//
// # Decisions
//
//   - In the yql dialect (Parse, the default) "..." is a string, never an
//     identifier. It is accepted where TiDB accepts a string, such as an
//     alias: SELECT 1 AS "x". Identifiers are bare or in backticks. In
//     the postgresql dialect (ParseDialect) "..." is a quoted identifier
//     ("" is a quote, no escapes), handed to TiDB as a backtick identifier;
//     nothing else differs, so YQL-only syntax parses in both.
//   - ORDER BY x [ASC|DESC] NULLS FIRST|LAST becomes ORDER BY x [ASC|DESC],
//     (pivot_nulls_first()) — a marker item after the one it qualifies,
//     which the binder folds into the sort key (also in index column
//     lists); OFFSET n alone becomes LIMIT <max> OFFSET n, OFFSET n LIMIT m
//     becomes LIMIT m OFFSET n, LIMIT ALL becomes LIMIT <max>.
//   - ALTER DATABASE d SET/RESET and ALTER ROLE|USER r [IN DATABASE d]
//     SET/RESET parse into RoleSetting (rolesetting.go), the SET/RESET
//     tail exactly as the session statements.
//   - Adjacent string literals are concatenated (TiDB), also on one line.
//   - ? and # are syntax errors: TiDB would read a parameter marker and a
//     MySQL comment. $name (YQL's named parameters) is a syntax error.
//   - Comments are dropped, so MySQL hints and /*! */ never reach TiDB.
//   - The type of a cast is checked while parsing, so catalog queries that
//     use PostgreSQL-only types (regclass, oid) must be answered before
//     Parse.
//   - MySQL's CAST(x AS SIGNED) and the like are rejected: cast targets are
//     PivotDB type names.
//   - KEY and INDEX at the start of a table element are column names when a
//     valid type name follows ("key Utf8"), and index definitions otherwise
//     ("KEY idx (a)"); an index named like a type ("KEY date (d)") is read
//     as an index because "(d)" is not a type modifier.
//   - Column names in column definitions and key column lists are always
//     backtick-quoted, so every reserved word works there. In expressions
//     only key, index, order and group are handled; other MySQL reserved
//     words (desc, range, rows, ...) need backticks, as in MySQL.
//   - Session statements keep the spellings drivers send: SET with = or TO,
//     SET TIME ZONE (Name "timezone"), SET NAMES ("client_encoding"), SHOW
//     TRANSACTION ISOLATION LEVEL ("transaction_isolation"). MySQL's SET
//     @x, SET GLOBAL x and one-word SHOW statements such as SHOW TABLES go
//     to TiDB.
//   - Setting values are literals only (see Value); checking names and
//     ranges is the catalog's job.
//
// # Debugging
//
// Statement.TiDBText is the text TiDB parsed. The data-driven files in
// testdata/parse show input → rewritten text → restored AST → parameters,
// column types, casts and settings for every rule; add a case there and
// run `go test ./sql/parser/ -run TestParse -rewrite`, then read the diff.
// FuzzParse (go test -fuzz FuzzParse ./sql/parser/) checks that Parse
// never panics and that errors always carry a SQLSTATE and a valid
// position.
package parser
