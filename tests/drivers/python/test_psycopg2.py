"""psycopg2 against PivotDB, run by tests/drivers_test.go with /usr/bin/python3
and the connection in PG* environment variables. Prints one line per check;
exits non-zero on the first failure."""
import datetime
import decimal
import sys

import psycopg2
import psycopg2.errors


def main():
    conn = psycopg2.connect("")
    # psycopg2 sends SET DATESTYLE TO 'ISO' itself when the server reports
    # another style; send it explicitly too, as applications do.
    cur = conn.cursor()
    cur.execute("SET DATESTYLE TO 'ISO'")
    cur.execute("SHOW DateStyle")
    assert cur.fetchone()[0].startswith("ISO"), "DateStyle"
    conn.commit()
    print("ok SET DATESTYLE")

    # Implicit BEGIN: psycopg2 opens a transaction before the first
    # statement; nothing is visible to another connection before commit.
    cur.execute("CREATE TABLE py_t (id Int64, d Date, ts Timestamp, b String, n Decimal(10,3), s Utf8, f Double, ok Bool, PRIMARY KEY (id))")
    conn.commit()
    cur.execute(
        "INSERT INTO py_t (id, d, ts, b, n, s, f, ok) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
        (1, datetime.date(2024, 2, 29), datetime.datetime(2024, 1, 2, 3, 4, 5, 123456),
         psycopg2.Binary(b"\x00\x01\xff'\\"), decimal.Decimal("12.345"), "it's", 0.5, True),
    )
    assert conn.get_transaction_status() == psycopg2.extensions.TRANSACTION_STATUS_INTRANS, "implicit BEGIN"
    other = psycopg2.connect("")
    ocur = other.cursor()
    ocur.execute("SELECT count(*) FROM py_t")
    assert ocur.fetchone()[0] == 0, "uncommitted row visible to another connection"
    other.rollback()
    conn.commit()
    ocur.execute("SELECT count(*) FROM py_t")
    assert ocur.fetchone()[0] == 1, "committed row not visible"
    other.close()
    print("ok implicit BEGIN and commit")

    # Client-side literals: psycopg2 spells parameters as '...'::date,
    # '...'::timestamp and '...'::bytea in the query text.
    cur.execute("SELECT d, ts, b, n, s, f, ok FROM py_t WHERE d = %s AND ts = %s AND b = %s",
                (datetime.date(2024, 2, 29), datetime.datetime(2024, 1, 2, 3, 4, 5, 123456),
                 psycopg2.Binary(b"\x00\x01\xff'\\")))
    d, ts, b, n, s, f, ok = cur.fetchone()
    assert d == datetime.date(2024, 2, 29), d
    assert ts == datetime.datetime(2024, 1, 2, 3, 4, 5, 123456), ts
    assert bytes(b) == b"\x00\x01\xff'\\", b
    assert n == decimal.Decimal("12.345"), n
    assert s == "it's" and f == 0.5 and ok is True
    print("ok client-side literals and types")

    cur.execute("SELECT %s::date, %s::timestamp, %s::bytea",
                (datetime.date(2000, 1, 1), datetime.datetime(2000, 1, 1, 0, 0), psycopg2.Binary(b"ab")))
    d, ts, b = cur.fetchone()
    assert d == datetime.date(2000, 1, 1), d
    assert ts == datetime.datetime(2000, 1, 1), ts
    assert bytes(b) == b"ab", b
    conn.commit()
    print("ok casts of literals")

    # A list parameter becomes ARRAY[...]; a bad array literal is a clear
    # error with PostgreSQL's SQLSTATE, and the connection stays usable.
    cur.execute("SELECT %s", ([1, 2, 3],))
    assert cur.fetchone() == ([1, 2, 3],)
    try:
        cur.execute("SELECT %s::int[]", ("{1,x",))
        raise AssertionError("a malformed array literal was accepted")
    except psycopg2.Error as e:
        assert e.pgcode == "22P02", (e.pgcode, e.pgerror)
        assert "malformed array literal" in e.pgerror, e.pgerror
    conn.rollback()
    cur.execute("SELECT 1")
    assert cur.fetchone() == (1,)
    conn.commit()
    print("ok ARRAY[...] and a malformed array literal")

    # A failed statement aborts the implicit transaction until rollback.
    try:
        cur.execute("INSERT INTO py_t (id) VALUES (1)")
        raise AssertionError("duplicate key accepted")
    except psycopg2.errors.UniqueViolation:
        pass
    try:
        cur.execute("SELECT 1")
        raise AssertionError("statement ran in an aborted transaction")
    except psycopg2.errors.InFailedSqlTransaction:
        pass
    conn.rollback()
    print("ok errors and aborted transaction")

    # autocommit mode and executemany.
    conn.autocommit = True
    cur.executemany("UPSERT INTO py_t (id, s) VALUES (%s, %s)", [(i, "v%d" % i) for i in range(2, 12)])
    cur.execute("SELECT count(*) FROM py_t")
    assert cur.fetchone()[0] == 11
    print("ok autocommit and executemany")

    # Arrays: a Python list is sent as ARRAY[...] (an empty one as '{}'),
    # array columns come back as lists, NULL elements as None.
    cur.execute("CREATE TABLE py_arr (id int4 PRIMARY KEY, tags text[], nums int8[])")
    cur.execute("INSERT INTO py_arr VALUES (%s, %s, %s)", (1, ["a", "b c", None, 'q"u'], [1, 2, 3]))
    cur.execute("INSERT INTO py_arr VALUES (%s, %s, %s)", (2, [], [10 ** 12]))
    cur.execute("SELECT id, tags, nums FROM py_arr ORDER BY id")
    rows = cur.fetchall()
    assert rows == [(1, ["a", "b c", None, 'q"u'], [1, 2, 3]), (2, [], [10 ** 12])], rows
    cur.execute("SELECT id FROM py_arr WHERE id = ANY(%s) ORDER BY id", ([2, 5, 1],))
    assert [r[0] for r in cur.fetchall()] == [1, 2]
    cur.execute("SELECT id FROM py_arr WHERE tags @> %s", (["b c"],))
    assert cur.fetchall() == [(1,)]
    cur.execute("SELECT unnest FROM unnest(%s::int[]) ORDER BY 1", ([3, 1, 2],))
    assert [r[0] for r in cur.fetchall()] == [1, 2, 3]
    cur.execute("SELECT ARRAY[[1, 2], [3, 4]], array_agg(id) FROM py_arr")
    assert cur.fetchone() == ([[1, 2], [3, 4]], [1, 2])
    print("ok arrays")
    conn.close()
    print("psycopg2: all checks passed")


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # noqa: BLE001 - print and fail
        print("FAILED:", repr(e))
        sys.exit(1)
