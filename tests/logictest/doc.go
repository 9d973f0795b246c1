// Package logictest runs sqllogictest files (the SQLite format) against a
// server that speaks the PostgreSQL wire protocol, over the simple query
// protocol, reading every value as text.
//
// # File format
//
// The format and its semantics follow SQLite's reference runner
// (sqllogictest.c with its SQLite/ODBC engines):
//
//   - Records are separated by one or more blank lines (a line of only
//     whitespace is blank; a trailing "\r" is removed, so CRLF files work).
//   - A line that starts with "#" is a comment wherever it appears (also inside
//     SQL text and expected results); it is dropped as if it were not there.
//   - A record may start with any number of "skipif ENGINE" / "onlyif ENGINE"
//     guard lines. Engine names compare case-insensitively with
//     Options.Engine ("pivotdb" by default); anything after the engine name
//     (usually "# reason") is ignored.
//   - "statement ok" / "statement error": the SQL is every following line of
//     the record, joined with "\n". "statement error" passes on any error;
//     "statement error CODE" (a PivotDB extension) only on SQLSTATE CODE.
//   - "query TYPES [SORTMODE [LABEL]]": TYPES is one letter per column (I
//     integer, R real, T text); SORTMODE is nosort (default), rowsort or
//     valuesort. The SQL runs up to a "----" line; the expected values follow,
//     one value per line, or the single line "N values hashing to MD5".
//   - "hash-threshold N": results with more than N values are compared by the
//     line "N values hashing to MD5", where MD5 is the hex MD5 of every value
//     followed by "\n", after sorting. The default threshold is 8 (the
//     reference runner's DEFAULT_HASH_THRESHOLD); 0 disables hashing.
//   - "halt" stops the file (a guarded halt only when the guard lets it run).
//
// # Value formatting
//
// NULL prints as "NULL" in every column type. For T, the empty string prints
// as "(empty)" and every byte outside the printable ASCII range 0x20..0x7E is
// replaced by "@" (byte-wise, so a two-byte UTF-8 character becomes "@@"),
// exactly as the reference runner does. For I, the text the server sent is
// converted the way SQLite's sqlite3_column_int converts a value: integers
// print as themselves, a real or numeric truncates toward zero ("2.9" → 2,
// "-2.9" → -2), text uses its longest numeric prefix ("12abc" → 12) or 0.
// Two deliberate differences: integers are not wrapped to 32 bits (the
// reference calls sqlite3_column_int, which would), and PostgreSQL booleans
// "t"/"f" print as 1/0, which is what SQLite (which has no boolean type)
// produced for the expected results. For R, the value converts the same way
// to a float64 and prints with "%.3f" (negative zero prints as "0.000").
//
// # Differences from the reference runner
//
//   - Result counts are checked exactly: the reference stops comparing at the
//     end of the shorter list, so a missing or extra row would pass there.
//   - When the expected values are listed although the result is longer than
//     the hash threshold, they are compared value by value rather than failed.
//     When the expected result is a hash line, it is compared by hash whatever
//     the threshold.
//   - Expected values written several per line, separated by whitespace (the
//     row-per-line style of other sqllogictest dialects), are accepted when the
//     number of lines does not match the number of values but the number of
//     whitespace-separated fields does. (The SQLite corpus itself always writes
//     one value per line; text values there may contain spaces.)
//   - Labels: queries with the same label must produce the same MD5 of their
//     values. The first record of a label that passes its own comparison (or,
//     for a record skipped as a known failure, its expected result) fixes the
//     label's hash; a failing record does not, so one wrong result does not
//     make every later query of that label fail.
//   - A record skipped by a guard (skipif/onlyif) leaves its label alone. In
//     -verify mode the reference registers the expected result of a skipped
//     labeled query too, and then compares the variant that runs with it;
//     files hold engine-specific variants of one labeled query ("onlyif
//     mysql" listing MySQL's output, "skipif mysql" SQLite's), and where
//     the listed results differ that compares this engine's result with
//     another engine's and fails falsely. Here only records that run fix a
//     label, as in the reference's completion mode. (In SQLite's own
//     corpus the variants of a label all list the same result, so its
//     outcomes do not change.)
//   - An unknown record type fails that record and the file goes on (the
//     reference stops the file).
//
// # Counting
//
// Only statement and query records are counted: passed, failed or skipped
// (skipped by a guard, or listed in the known-failures list). Records after a
// halt are not counted. When the connection is lost or the file's timeout
// expires, every remaining record counts as failed with the reason "not run",
// so totals stay comparable between runs.
//
// # Known failures
//
// See [KnownFailures] and [ParseKnownFailures]. A listed record is skipped
// (not executed) and counted in Skipped and in FileResult.Known, unless
// Options.RunKnownFailures is set: then it runs, and counts as skipped and
// known when it still fails, or as passed and FileResult.Fixed when it now
// passes. Either way it never counts as failed. [WriteKnownFailures] writes
// a run's failures in the list's format, to start or refresh a list.
//
// # Connections
//
// Records run on a [Conn]: [RunFile] opens one over the wire with pgx;
// [RunConn] takes one from the caller, which is how package sql's tests run
// the same files over a Session in their own process, without a built
// server (sql/logictest_test.go).
//
// # Output
//
// [RunFiles] and [RunFile] print nothing but, with Options.Verbose, each
// failing record (location, message, SQL, expected and actual values) to
// Options.Out. [Main] prints the per-file and total lines.
package logictest
