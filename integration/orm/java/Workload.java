// MariaDB Connector/J workload for the sandbox tests (integration/orm_test.go).
// Usage: java -cp mariadb-java-client.jar:. Workload JDBC_URL USER PASSWORD RUN
// Prints a transcript of what it observed.
import java.sql.*;
import java.util.*;

public class Workload {
    public static void main(String[] args) throws Exception {
        String url = args[0], user = args[1], password = args[2], run = args[3];
        List<String> out = new ArrayList<>();
        try (Connection c = DriverManager.getConnection(url, user, password)) {
            DatabaseMetaData md = c.getMetaData();
            String db = c.getCatalog();
            out.add("tables before: " + tables(md, db));
            try (Statement s = c.createStatement()) {
                s.execute("CREATE TABLE IF NOT EXISTS cj_depts (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(40) NOT NULL UNIQUE)");
                s.execute("CREATE TABLE IF NOT EXISTS cj_emps (id INT AUTO_INCREMENT PRIMARY KEY, dept_id INT NOT NULL, "
                        + "name VARCHAR(40), salary DECIMAL(10,2), FOREIGN KEY (dept_id) REFERENCES cj_depts(id))");
                s.execute("CREATE TABLE IF NOT EXISTS cj_notes (id INT AUTO_INCREMENT PRIMARY KEY, dept_id INT NOT NULL, "
                        + "note VARCHAR(40), n INT)");
            }
            out.add("tables: " + tables(md, db));
            try (ResultSet rs = md.getColumns(db, null, "cj_emps", "%")) {
                while (rs.next()) {
                    out.add("column " + rs.getString("COLUMN_NAME") + " " + rs.getString("TYPE_NAME") + " nullable=" + rs.getInt("NULLABLE"));
                }
            }
            try (ResultSet rs = md.getPrimaryKeys(db, null, "cj_emps")) {
                while (rs.next()) out.add("pk " + rs.getString("COLUMN_NAME"));
            }
            try (ResultSet rs = md.getImportedKeys(db, null, "cj_emps")) {
                while (rs.next()) {
                    out.add("fk " + rs.getString("FKCOLUMN_NAME") + " -> " + rs.getString("PKTABLE_NAME") + "." + rs.getString("PKCOLUMN_NAME")
                            + " same catalog=" + db.equals(rs.getString("PKTABLE_CAT")));
                }
            }
            try (ResultSet rs = md.getIndexInfo(db, null, "cj_emps", false, false)) {
                SortedSet<String> idx = new TreeSet<>();
                while (rs.next()) idx.add(rs.getString("INDEX_NAME"));
                out.add("indexes " + idx);
            }
            long deptId;
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO cj_depts (name) VALUES (?)", Statement.RETURN_GENERATED_KEYS)) {
                ps.setString(1, "dept-" + run);
                out.add("insert affected " + ps.executeUpdate());
                try (ResultSet k = ps.getGeneratedKeys()) { k.next(); deptId = k.getLong(1); }
            }
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO cj_emps (dept_id, name, salary) VALUES (?, ?, ?)")) {
                for (String[] e : new String[][] {{"ann", "100.50"}, {"bob", "200"}}) {
                    ps.setLong(1, deptId); ps.setString(2, e[0]); ps.setBigDecimal(3, new java.math.BigDecimal(e[1]));
                    ps.addBatch();
                }
                out.add("batch " + Arrays.toString(ps.executeBatch()));
            }
            // Batches of a statement prepared before its table is written
            // (then executed again after it is), with NULLs, and inside a
            // committed transaction: COM_STMT_BULK_EXECUTE where the server
            // offers it.
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO cj_notes (dept_id, note, n) VALUES (?, ?, ?)")) {
                for (int round = 0; round < 3; round++) {
                    if (round == 2) c.setAutoCommit(false);
                    for (int i = 0; i < 4; i++) {
                        ps.setLong(1, deptId);
                        if (i == 1) ps.setNull(2, Types.VARCHAR); else ps.setString(2, "note-" + round + "-" + i);
                        ps.setInt(3, round * 10 + i);
                        ps.addBatch();
                    }
                    out.add("notes batch " + round + " " + Arrays.toString(ps.executeBatch()));
                    if (round == 0) {
                        try (Statement s = c.createStatement()) {
                            out.add("notes touched " + s.executeUpdate("UPDATE cj_notes SET n = n WHERE dept_id = -1"));
                        }
                    }
                }
                c.commit();
                c.setAutoCommit(true);
            }
            try (Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery("SELECT COUNT(*), COUNT(note), SUM(n) FROM cj_notes WHERE dept_id = " + deptId)) {
                rs.next();
                out.add("notes " + rs.getInt(1) + " " + rs.getInt(2) + " " + rs.getLong(3));
            }
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement("UPDATE cj_emps SET salary = salary * 2 WHERE dept_id = ?")) {
                ps.setLong(1, deptId);
                out.add("update in tx " + ps.executeUpdate());
            }
            c.rollback();
            c.setAutoCommit(true);
            try (PreparedStatement ps = c.prepareStatement(
                    "SELECT d.name AS dept, e.name, e.salary FROM cj_emps e JOIN cj_depts d ON d.id = e.dept_id WHERE d.id = ? ORDER BY e.name")) {
                ps.setLong(1, deptId);
                try (ResultSet rs = ps.executeQuery()) {
                    ResultSetMetaData m = rs.getMetaData();
                    for (int i = 1; i <= m.getColumnCount(); i++) {
                        out.add("meta " + m.getColumnLabel(i) + " table=" + m.getTableName(i) + " catalog=" + db.equals(m.getCatalogName(i)));
                    }
                    while (rs.next()) out.add("row " + rs.getString(2) + " " + rs.getBigDecimal(3));
                }
            }
            try (Statement s = c.createStatement()) {
                s.executeUpdate("INSERT INTO cj_emps (dept_id, name) VALUES (999999, 'orphan')");
                out.add("orphan: no error");
            } catch (SQLException e) {
                out.add("orphan: " + e.getErrorCode() + " " + e.getSQLState() + (e.getMessage().contains("_sqlfork") ? " leaks" : " clean"));
            }
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM cj_emps")) {
                rs.next();
                out.add("emps " + rs.getInt(1));
            }
        }
        System.out.println(String.join("\n", out));
    }

    static String tables(DatabaseMetaData md, String db) throws SQLException {
        List<String> t = new ArrayList<>();
        try (ResultSet rs = md.getTables(db, null, "%", new String[] {"TABLE"})) {
            while (rs.next()) t.add(rs.getString("TABLE_NAME"));
        }
        Collections.sort(t);
        return t.toString();
    }
}
