"""Streams a table through a psycopg2 named (server-side) cursor.

Run by tests/drivers_test.go (TestPsycopg2NamedCursor), which loads the
table first and watches the server's RSS while this reads it. Arguments:
table name, expected row count, and "scroll" to declare the cursor SCROLL
(which keeps every row on the server) instead of psycopg2's default.
"""
import sys

import psycopg2


def main():
    table, want = sys.argv[1], int(sys.argv[2])
    scroll = len(sys.argv) > 3 and sys.argv[3] == "scroll"
    conn = psycopg2.connect("")
    cur = conn.cursor(name="stream", scrollable=True if scroll else None)
    cur.itersize = 5000
    cur.execute("SELECT k, v FROM %s" % table)
    n, total = 0, 0
    for k, v in cur:
        n += 1
        total += k
        assert len(v) == 100, v
        if n % 200000 == 0:
            print("read", n, flush=True)
    assert n == want, (n, want)
    assert total == want * (want + 1) // 2, total
    cur.close()
    conn.commit()
    print("named cursor: streamed %d rows" % n)
    conn.close()


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # noqa: BLE001 - print and fail
        print("FAILED:", repr(e))
        sys.exit(1)
