// pgjdbc against PivotDB, compiled with javac and run by
// tests/drivers_test.go as `java -cp <dir>:postgresql.jar DriverTest URL`.
// Prints one line per check; exits non-zero on the first failure.

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
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

            // Arrays: createArrayOf parameters (= ANY(?), array columns),
            // and java.sql.Array results.
            try (Statement st = c.createStatement()) {
                st.execute("CREATE TABLE jdbc_arr (id int4 PRIMARY KEY, tags text[], nums int4[])");
            }
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO jdbc_arr VALUES (?, ?, ?)")) {
                for (int i = 1; i <= 3; i++) {
                    ps.setInt(1, i);
                    ps.setArray(2, c.createArrayOf("text", new String[] {"t" + i, "x y", null}));
                    ps.setArray(3, c.createArrayOf("int4", new Integer[] {i, i * 10}));
                    check(ps.executeUpdate() == 1, "insert an array row");
                }
            }
            for (int run = 0; run < 6; run++) {
                // The driver prepares on the server from the fifth run on.
                try (PreparedStatement ps = c.prepareStatement("SELECT id, tags, nums FROM jdbc_arr WHERE id = ANY(?) ORDER BY id")) {
                    ps.setArray(1, c.createArrayOf("int4", new Integer[] {3, 1, 99}));
                    try (ResultSet rs = ps.executeQuery()) {
                        check(rs.next() && rs.getInt(1) == 1, "= ANY(?) first row");
                        String[] tags = (String[]) rs.getArray(2).getArray();
                        check(tags.length == 3 && tags[0].equals("t1") && tags[1].equals("x y") && tags[2] == null,
                            "text[] back: " + Arrays.toString(tags));
                        Integer[] nums = (Integer[]) rs.getArray(3).getArray();
                        check(nums.length == 2 && nums[0] == 1 && nums[1] == 10, "int4[] back: " + Arrays.toString(nums));
                        check(rs.next() && rs.getInt(1) == 3 && !rs.next(), "= ANY(?) second row");
                    }
                }
            }
            try (PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM jdbc_arr WHERE tags && ?")) {
                ps.setArray(1, c.createArrayOf("varchar", new String[] {"t2", "zz"}));
                try (ResultSet rs = ps.executeQuery()) {
                    check(rs.next() && rs.getLong(1) == 1, "tags && ?");
                }
            }
            try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT ARRAY[1.5, 2]::numeric[], ARRAY[10000000000]")) {
                rs.next();
                check(rs.getMetaData().getColumnType(1) == java.sql.Types.ARRAY, "array column type");
                check(rs.getMetaData().getColumnTypeName(2).equals("_int8"), "int8[] type name " + rs.getMetaData().getColumnTypeName(2));
                BigDecimal[] d = (BigDecimal[]) rs.getArray(1).getArray();
                check(d.length == 2 && d[0].compareTo(new BigDecimal("1.5")) == 0, "numeric[] back");
                Long[] l = (Long[]) rs.getArray(2).getArray();
                check(l.length == 1 && l[0] == 10000000000L, "int8[] back");
            }
            System.out.println("ok arrays");

            // Metadata that comes from the server's parameters and catalog.
            check(c.getMetaData().getDatabaseMajorVersion() == 15, "server version");
            try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT current_database(), version()")) {
                rs.next();
                check(rs.getString(1).equals("pivotdb"), "current_database");
                check(rs.getString(2).startsWith("PostgreSQL 15"), "version");
            }
            System.out.println("ok server metadata");

            databaseMetaData(c);

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

    // DatabaseMetaData calls that DBeaver, DataGrip, Flyway and Hibernate
    // make. getPrimaryKeys and getIndexInfo expand pg_index.indkey with
    // information_schema._pg_expandarray and select fields of its records;
    // getTypeInfo compares typinput with 'array_in'::regproc.
    // getImportedKeys/getExportedKeys join eight catalog tables with
    // generate_series(1, 32) in one comma FROM list.
    static void databaseMetaData(Connection c) throws SQLException {
        try (Statement st = c.createStatement()) {
            st.execute("CREATE TABLE meta_parent (id Uint64, name varchar(30) NOT NULL, PRIMARY KEY (id))");
            st.execute("CREATE TABLE meta_child (id Int64, parent Uint64 REFERENCES meta_parent, note Utf8 DEFAULT 'x', "
                + "PRIMARY KEY (id))");
            st.execute("CREATE VIEW meta_view AS SELECT id, name FROM meta_parent");
            st.execute("CREATE TABLE meta_pair (a int, b text, note text, PRIMARY KEY (b, a))");
            st.execute("CREATE UNIQUE INDEX meta_pair_u ON meta_pair (note)");
            st.execute("CREATE INDEX meta_pair_d ON meta_pair (note DESC, a)");
        }
        DatabaseMetaData m = c.getMetaData();
        java.util.Map<String, String> tables = new java.util.TreeMap<>();
        try (ResultSet rs = m.getTables(null, "public", "meta%", new String[] {"TABLE", "VIEW"})) {
            while (rs.next()) {
                tables.put(rs.getString("TABLE_NAME"), rs.getString("TABLE_TYPE"));
            }
        }
        check(tables.toString().equals("{meta_child=TABLE, meta_pair=TABLE, meta_parent=TABLE, meta_view=VIEW}"), "getTables: " + tables);

        StringBuilder cols = new StringBuilder();
        try (ResultSet rs = m.getColumns(null, "public", "meta_child", "%")) {
            while (rs.next()) {
                cols.append(rs.getString("COLUMN_NAME")).append(':').append(rs.getString("TYPE_NAME")).append(':')
                    .append(rs.getInt("DATA_TYPE")).append(':').append(rs.getInt("COLUMN_SIZE")).append(':')
                    .append(rs.getString("IS_NULLABLE")).append(':').append(rs.getString("COLUMN_DEF")).append(' ');
            }
        }
        // A Uint64 column is the domain uint64 over numeric(20,0): DISTINCT
        // (2001), 20 digits.
        check(cols.toString().equals("id:int8:-5:19:YES:null parent:uint64:2001:20:YES:null note:text:12:2147483647:YES:'x' "),
            "getColumns: " + cols);
        try (ResultSet rs = m.getColumns(null, "public", "meta_view", "%")) {
            int n = 0;
            while (rs.next()) {
                n++;
            }
            check(n == 2, "getColumns of a view: " + n);
        }

        java.util.List<String> schemas = new java.util.ArrayList<>();
        try (ResultSet rs = m.getSchemas()) {
            while (rs.next()) {
                schemas.add(rs.getString("TABLE_SCHEM"));
            }
        }
        check(schemas.toString().equals("[information_schema, pg_catalog, public]"), "getSchemas: " + schemas);
        try (ResultSet rs = m.getCatalogs()) {
            check(rs.next() && rs.getString(1).equals("pivotdb") && !rs.next(), "getCatalogs");
        }
        // getPrimaryKeys: the key's columns in key order (KEY_SEQ).
        StringBuilder pk = new StringBuilder();
        try (ResultSet rs = m.getPrimaryKeys(null, "public", "meta_pair")) {
            while (rs.next()) {
                pk.append(rs.getString("TABLE_NAME")).append(':').append(rs.getString("COLUMN_NAME")).append(':')
                    .append(rs.getInt("KEY_SEQ")).append(':').append(rs.getString("PK_NAME")).append(' ');
            }
        }
        check(pk.toString().equals("meta_pair:b:1:meta_pair_pkey meta_pair:a:2:meta_pair_pkey "), "getPrimaryKeys: " + pk);

        // getIndexInfo: the primary key and the secondary indexes, unique
        // ones first, each column with its position and direction.
        StringBuilder ix = new StringBuilder();
        try (ResultSet rs = m.getIndexInfo(null, "public", "meta_pair", false, false)) {
            while (rs.next()) {
                ix.append(rs.getString("INDEX_NAME")).append(':').append(rs.getBoolean("NON_UNIQUE")).append(':')
                    .append(rs.getInt("ORDINAL_POSITION")).append(':').append(rs.getString("COLUMN_NAME")).append(':')
                    .append(rs.getString("ASC_OR_DESC")).append(' ');
            }
        }
        check(ix.toString().equals("meta_pair_pkey:false:1:b:A meta_pair_pkey:false:2:a:A meta_pair_u:false:1:note:A "
            + "meta_pair_d:true:1:note:D meta_pair_d:true:2:a:A "), "getIndexInfo: " + ix);
        int uniqueRows = 0;
        try (ResultSet rs = m.getIndexInfo(null, "public", "meta_pair", true, false)) {
            while (rs.next()) {
                uniqueRows++;
            }
        }
        check(uniqueRows == 3, "getIndexInfo(unique): " + uniqueRows);

        // getImportedKeys / getExportedKeys / getCrossReference: the foreign
        // keys, one row per column pair in key order (KEY_SEQ), with the
        // referenced table's primary key index as PK_NAME and the actions.
        try (Statement st = c.createStatement()) {
            st.execute("CREATE TABLE meta_line (oa int, ob text, n int, PRIMARY KEY (n), "
                + "CONSTRAINT meta_line_pair FOREIGN KEY (ob, oa) REFERENCES meta_pair (b, a) ON DELETE CASCADE)");
        }
        long t0 = System.nanoTime();
        String imported = foreignKeys(m.getImportedKeys(null, "public", "meta_line"));
        long ms = (System.nanoTime() - t0) / 1000000;
        check(imported.equals("meta_pair.b>meta_line.ob:1:meta_line_pair:meta_pair_pkey:upd3:del0:def7 "
            + "meta_pair.a>meta_line.oa:2:meta_line_pair:meta_pair_pkey:upd3:del0:def7 "), "getImportedKeys: " + imported);
        check(ms < 5000, "getImportedKeys took " + ms + " ms");
        String childKeys = foreignKeys(m.getImportedKeys(null, "public", "meta_child"));
        check(childKeys.equals("meta_parent.id>meta_child.parent:1:meta_child_parent_fkey:meta_parent_pkey:upd3:del3:def7 "),
            "getImportedKeys(meta_child): " + childKeys);
        String exported = foreignKeys(m.getExportedKeys(null, "public", "meta_pair"));
        check(exported.equals(imported), "getExportedKeys: " + exported);
        String cross = foreignKeys(m.getCrossReference(null, "public", "meta_parent", null, "public", "meta_child"));
        check(cross.equals(childKeys), "getCrossReference: " + cross);
        check(foreignKeys(m.getExportedKeys(null, "public", "meta_line")).isEmpty(), "getExportedKeys of an unreferenced table");

        // getTypeInfo: every type with its java.sql.Types code; the array
        // types (typinput array_in) are ARRAY.
        java.util.Map<String, Integer> typeInfo = new java.util.HashMap<>();
        try (ResultSet rs = m.getTypeInfo()) {
            while (rs.next()) {
                typeInfo.put(rs.getString("TYPE_NAME"), rs.getInt("DATA_TYPE"));
            }
        }
        check(Integer.valueOf(java.sql.Types.INTEGER).equals(typeInfo.get("int4"))
            && Integer.valueOf(java.sql.Types.BIGINT).equals(typeInfo.get("int8"))
            && Integer.valueOf(java.sql.Types.VARCHAR).equals(typeInfo.get("varchar"))
            && Integer.valueOf(java.sql.Types.ARRAY).equals(typeInfo.get("_int4"))
            && Integer.valueOf(java.sql.Types.ARRAY).equals(typeInfo.get("_text"))
            && typeInfo.containsKey("serial") && typeInfo.containsKey("bigserial"), "getTypeInfo: " + typeInfo);
        try (Statement st = c.createStatement()) {
            st.execute("DROP TABLE meta_line");
            st.execute("DROP TABLE meta_pair");
            st.execute("DROP VIEW meta_view");
            st.execute("DROP TABLE meta_child");
            st.execute("DROP TABLE meta_parent");
        }
        System.out.println("ok DatabaseMetaData");
    }

    // foreignKeys prints getImportedKeys-shaped rows as
    // "pktable.col>fktable.col:seq:fk:pk:updN:delN:defN ".
    static String foreignKeys(ResultSet rs) throws SQLException {
        StringBuilder b = new StringBuilder();
        try (rs) {
            while (rs.next()) {
                b.append(rs.getString("PKTABLE_NAME")).append('.').append(rs.getString("PKCOLUMN_NAME")).append('>')
                    .append(rs.getString("FKTABLE_NAME")).append('.').append(rs.getString("FKCOLUMN_NAME")).append(':')
                    .append(rs.getInt("KEY_SEQ")).append(':').append(rs.getString("FK_NAME")).append(':')
                    .append(rs.getString("PK_NAME")).append(":upd").append(rs.getInt("UPDATE_RULE"))
                    .append(":del").append(rs.getInt("DELETE_RULE")).append(":def").append(rs.getInt("DEFERRABILITY"))
                    .append(' ');
            }
        }
        return b.toString();
    }
}
