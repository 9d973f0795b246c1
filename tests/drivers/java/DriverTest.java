// pgjdbc against PivotDB, compiled with javac and run by
// tests/drivers_test.go as `java -cp <dir>:postgresql.jar DriverTest URL`.
// Prints one line per check; exits non-zero on the first failure.

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.Date;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.util.Arrays;
import java.io.StringReader;
import java.io.StringWriter;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyManager;

public class DriverTest {
    static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }

    public static void main(String[] args) throws Exception {
        // prepareThreshold=2: from the third execution on, pgjdbc uses a
        // named server-side statement with binary parameters and results.
        String url = args[0] + (args[0].contains("?") ? "&" : "?") + "prepareThreshold=2";
        try (Connection c = DriverManager.getConnection(url, "pivotdb", "")) {
            try (Statement st = c.createStatement()) {
                st.execute("CREATE TABLE jdbc_t (id Int64, i4 Int32, i2 Int16, f8 Double, f4 Float, d Decimal(12,3), "
                    + "b Bool, s Utf8, bin String, dt Date, ts Timestamp, PRIMARY KEY (id))");
            }
            System.out.println("ok connect and DDL");

            try (PreparedStatement ps = c.prepareStatement(
                    "INSERT INTO jdbc_t (id, i4, i2, f8, f4, d, b, s, bin, dt, ts) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
                for (int i = 1; i <= 10; i++) {
                    ps.setLong(1, i);
                    ps.setInt(2, i * 1000);
                    ps.setShort(3, (short) -i);
                    ps.setDouble(4, i + 0.25);
                    ps.setFloat(5, i + 0.5f);
                    ps.setBigDecimal(6, new BigDecimal(i + ".125"));
                    ps.setBoolean(7, i % 2 == 0);
                    ps.setString(8, "row " + i);
                    ps.setBytes(9, new byte[] {0, (byte) i, (byte) 0xff});
                    ps.setDate(10, Date.valueOf("2024-02-" + (10 + i)));
                    ps.setTimestamp(11, Timestamp.valueOf("2024-01-02 03:04:05.123456"));
                    check(ps.executeUpdate() == 1, "insert count");
                }
            }
            System.out.println("ok PreparedStatement insert past prepareThreshold");

            try (PreparedStatement ps = c.prepareStatement(
                    "SELECT id, i4, i2, f8, f4, d, b, s, bin, dt, ts FROM jdbc_t WHERE id = ?")) {
                for (int i = 1; i <= 6; i++) {
                    ps.setLong(1, i);
                    try (ResultSet rs = ps.executeQuery()) {
                        check(rs.next(), "row " + i);
                        check(rs.getLong(1) == i, "id");
                        check(rs.getInt(2) == i * 1000, "int4");
                        check(rs.getShort(3) == -i, "int2");
                        check(rs.getDouble(4) == i + 0.25, "float8");
                        check(rs.getFloat(5) == i + 0.5f, "float4");
                        check(rs.getBigDecimal(6).compareTo(new BigDecimal(i + ".125")) == 0, "numeric " + rs.getBigDecimal(6));
                        check(rs.getBoolean(7) == (i % 2 == 0), "bool");
                        check(rs.getString(8).equals("row " + i), "text");
                        check(Arrays.equals(rs.getBytes(9), new byte[] {0, (byte) i, (byte) 0xff}), "bytea");
                        check(rs.getDate(10).toString().equals("2024-02-" + (10 + i)), "date " + rs.getDate(10));
                        check(rs.getTimestamp(11).equals(Timestamp.valueOf("2024-01-02 03:04:05.123456")),
                            "timestamp " + rs.getTimestamp(11));
                        check(!rs.next(), "one row");
                    }
                }
            }
            System.out.println("ok PreparedStatement select past prepareThreshold (binary results)");

            // Transactions.
            c.setAutoCommit(false);
            try (Statement st = c.createStatement()) {
                st.executeUpdate("DELETE FROM jdbc_t WHERE id = 1");
                c.rollback();
                try (ResultSet rs = st.executeQuery("SELECT count(*) FROM jdbc_t")) {
                    rs.next();
                    check(rs.getLong(1) == 10, "rollback kept the row");
                }
                st.executeUpdate("DELETE FROM jdbc_t WHERE id = 10");
                c.commit();
                try (ResultSet rs = st.executeQuery("SELECT count(*) FROM jdbc_t")) {
                    rs.next();
                    check(rs.getLong(1) == 9, "commit deleted the row");
                }
                c.commit();
            }
            System.out.println("ok transactions");

            // Fetch size: inside a transaction pgjdbc reads through a portal
            // in chunks (Execute with a row limit, PortalSuspended).
            try (PreparedStatement ps = c.prepareStatement("SELECT id FROM jdbc_t ORDER BY id")) {
                ps.setFetchSize(2);
                try (ResultSet rs = ps.executeQuery()) {
                    long n = 0, last = 0;
                    while (rs.next()) {
                        check(rs.getLong(1) > last, "order");
                        last = rs.getLong(1);
                        n++;
                    }
                    check(n == 9, "fetched " + n + " rows");
                }
            }
            c.commit();
            c.setAutoCommit(true);
            System.out.println("ok fetch size");

            // Batches.
            try (PreparedStatement ps = c.prepareStatement("UPSERT INTO jdbc_t (id, s) VALUES (?, ?)")) {
                for (int i = 100; i < 105; i++) {
                    ps.setLong(1, i);
                    ps.setString(2, "batch");
                    ps.addBatch();
                }
                int[] counts = ps.executeBatch();
                check(counts.length == 5, "batch counts");
            }
            try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT count(*) FROM jdbc_t WHERE s = 'batch'")) {
                rs.next();
                check(rs.getLong(1) == 5, "batch rows");
            }
            System.out.println("ok batch");

            // Errors carry the SQLSTATE.
            try (Statement st = c.createStatement()) {
                st.executeUpdate("INSERT INTO jdbc_t (id) VALUES (2)");
                throw new AssertionError("duplicate key accepted");
            } catch (SQLException e) {
                check("23505".equals(e.getSQLState()), "SQLSTATE " + e.getSQLState());
            }
            System.out.println("ok errors");

            // getGeneratedKeys: pgjdbc appends RETURNING * (or RETURNING
            // "id" for named columns) and reads the returned rows, with the
            // statement prepared on the server from the third run on.
            try (Statement st = c.createStatement()) {
                st.execute("CREATE TABLE jdbc_keys (id serial PRIMARY KEY, name Utf8)");
            }
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO jdbc_keys (name) VALUES (?)",
                    Statement.RETURN_GENERATED_KEYS)) {
                for (int i = 1; i <= 4; i++) {
                    ps.setString(1, "n" + i);
                    check(ps.executeUpdate() == 1, "insert count with generated keys");
                    try (ResultSet keys = ps.getGeneratedKeys()) {
                        check(keys.next(), "a generated key");
                        check(keys.getInt("id") == i, "generated id " + i);
                        check(("n" + i).equals(keys.getString("name")), "returned name");
                        check(!keys.next(), "one generated key row");
                    }
                }
            }
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO jdbc_keys (name) VALUES (?)", new String[] {"id"})) {
                ps.setString(1, "named");
                ps.executeUpdate();
                try (ResultSet keys = ps.getGeneratedKeys()) {
                    check(keys.next() && keys.getLong(1) == 5, "generated key by column name");
                    check(keys.getMetaData().getColumnCount() == 1, "only the named column");
                }
            }
            try (Statement st = c.createStatement()) {
                check(st.executeUpdate("INSERT INTO jdbc_keys (name) VALUES ('a'), ('b')", Statement.RETURN_GENERATED_KEYS) == 2,
                    "multi-row insert count");
                try (ResultSet keys = st.getGeneratedKeys()) {
                    check(keys.next() && keys.getInt(1) == 6 && keys.next() && keys.getInt(1) == 7 && !keys.next(),
                        "generated keys of a multi-row insert");
                }
            }
            System.out.println("ok getGeneratedKeys");

            // Metadata that comes from the server's parameters and catalog.
            check(c.getMetaData().getDatabaseMajorVersion() == 15, "server version");
            try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT current_database(), version()")) {
                rs.next();
                check(rs.getString(1).equals("pivotdb"), "current_database");
                check(rs.getString(2).startsWith("PostgreSQL 15"), "version");
            }
            System.out.println("ok server metadata");

            // CopyManager: COPY FROM STDIN and TO STDOUT, and a bad row.
            try (Statement st = c.createStatement()) {
                st.execute("CREATE TABLE jcopy (id Int64, name Utf8, PRIMARY KEY (id))");
            }
            CopyManager cm = c.unwrap(PGConnection.class).getCopyAPI();
            StringBuilder in = new StringBuilder();
            for (int i = 0; i < 10000; i++) {
                in.append(i).append(",\"name, ").append(i).append("\"\n");
            }
            long copied = cm.copyIn("COPY jcopy FROM STDIN WITH (FORMAT csv)", new StringReader(in.toString()));
            check(copied == 10000, "copyIn row count " + copied);
            StringWriter out = new StringWriter();
            long sent = cm.copyOut("COPY jcopy TO STDOUT WITH CSV", out);
            check(sent == 10000 && out.toString().equals(in.toString()), "copyOut gives the rows back");
            try {
                cm.copyIn("COPY jcopy FROM STDIN WITH (FORMAT csv)", new StringReader("20000,a\nx,b\n"));
                check(false, "bad row accepted");
            } catch (SQLException e) {
                check("22P02".equals(e.getSQLState()), "bad row SQLSTATE " + e.getSQLState());
            }
            try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT count(*) FROM jcopy")) {
                rs.next();
                check(rs.getLong(1) == 10000, "the failed COPY left rows");
            }
            System.out.println("ok CopyManager");
        }
        System.out.println("pgjdbc: all checks passed");
    }
}
