// MariaDB Connector/J batches for the bulk-execute test
// (integration/bulk_test.go). Usage: java -cp mariadb-java-client.jar:. Bulk JDBC_URL USER PASSWORD
// Prints a transcript of what it observed.
import java.sql.*;
import java.util.*;

public class Bulk {
    public static void main(String[] args) throws Exception {
        List<String> out = new ArrayList<>();
        try (Connection c = DriverManager.getConnection(args[0], args[1], args[2])) {
            // A batch insert into a table production has (its first write).
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO bk_items (k, v) VALUES (?, ?)")) {
                for (int k = 10; k < 13; k++) {
                    ps.setInt(1, k);
                    ps.setString(2, k == 11 ? null : "v" + k);
                    ps.addBatch();
                }
                out.add("insert batch " + Arrays.toString(ps.executeBatch()));
                // Another table written (in a sandbox: forked, so the
                // statement is prepared again), then the same statement
                // again, in a committed transaction.
                try (Statement s = c.createStatement()) {
                    out.add("other touched " + s.executeUpdate("UPDATE bk_other SET k = k"));
                }
                c.setAutoCommit(false);
                for (int k = 20; k < 22; k++) {
                    ps.setInt(1, k);
                    ps.setString(2, "tx" + k);
                    ps.addBatch();
                }
                out.add("insert batch in tx " + Arrays.toString(ps.executeBatch()));
                c.commit();
                c.setAutoCommit(true);
            }
            // A batch insert and a batch update reading a table nothing has
            // written yet, run again after a write to that table.
            try (PreparedStatement ins = c.prepareStatement("INSERT INTO bk_items (k, v) SELECT ? + MAX(k), ? FROM bk_keys");
                    PreparedStatement ps = c.prepareStatement(
                    "UPDATE bk_items SET v = ? WHERE k = ? AND k IN (SELECT k FROM bk_keys)")) {
                for (int round = 0; round < 2; round++) {
                    for (int k : new int[] {1, 2, 10}) {
                        ps.setString(1, "u" + round + "-" + k);
                        ps.setInt(2, k);
                        ps.addBatch();
                    }
                    out.add("update batch " + round + " " + Arrays.toString(ps.executeBatch()));
                    for (int k = 40; k < 43; k++) {
                        ins.setInt(1, k + 10 * round);
                        ins.setString(2, "sel" + round);
                        ins.addBatch();
                    }
                    out.add("insert-select batch " + round + " " + Arrays.toString(ins.executeBatch()));
                    if (round == 0) {
                        try (Statement s = c.createStatement()) {
                            out.add("keys added " + s.executeUpdate("INSERT INTO bk_keys VALUES (10)"));
                        }
                    }
                }
            }
            // A batch that fails part way (duplicate key): the error, and
            // what stayed.
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO bk_items (k, v) VALUES (?, ?)")) {
                for (int k : new int[] {30, 1, 31}) {
                    ps.setInt(1, k);
                    ps.setString(2, "dup" + k);
                    ps.addBatch();
                }
                ps.executeBatch();
                out.add("duplicate batch: no error");
            } catch (SQLException e) {
                out.add("duplicate batch: " + e.getErrorCode() + " " + e.getSQLState() + (e.getMessage().contains("_sqlfork") ? " leaks" : " clean"));
            }
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT k, v FROM bk_items ORDER BY k")) {
                while (rs.next()) out.add("row " + rs.getInt(1) + " " + rs.getString(2));
            }
        }
        System.out.println(String.join("\n", out));
    }
}
