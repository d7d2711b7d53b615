// NeoRAG's Neo4j launcher: one Neo4j Community DBMS (Bolt + HTTP + Browser) from the jars that
// `neorag neo4j start` resolved with Maven. Usage: java -cp 'lib/*:launcher' NeoragNeo4j HOME CONF
// HOME holds data/ and logs/; CONF is the neo4j.conf that NeoRAG wrote (listen addresses, memory).
// The neo4j user's password is taken from the environment (NEORAG_NEO4J_INITIAL_PASSWORD), never argv.
import java.nio.file.Path;
import java.util.Map;

import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;

public final class NeoragNeo4j {
    private NeoragNeo4j() {
    }

    public static void main(String[] args) throws InterruptedException {
        if (args.length != 2) {
            System.err.println("usage: NeoragNeo4j HOME_DIR NEO4J_CONF");
            System.exit(64);
        }
        Path home = Path.of(args[0]).toAbsolutePath();
        DatabaseManagementService dbms =
                new DatabaseManagementServiceBuilder(home).loadPropertiesFromFile(Path.of(args[1])).build();
        // SIGTERM / SIGINT run this hook: a clean shutdown (checkpoint, then the store files are closed).
        Runtime.getRuntime().addShutdownHook(new Thread(dbms::shutdown, "neorag-neo4j-shutdown"));
        String password = System.getenv("NEORAG_NEO4J_INITIAL_PASSWORD");
        if (password != null && !password.isEmpty()) {
            setPassword(dbms, password);
        }
        System.out.println("NEORAG_NEO4J_READY");
        System.out.flush();
        Thread.currentThread().join();
    }

    /** Sets the neo4j user's password (no change required at first login); the same one again is fine. */
    private static void setPassword(DatabaseManagementService dbms, String password) {
        try {
            dbms.database("system").executeTransactionally(
                    "ALTER USER neo4j SET PASSWORD $pw CHANGE NOT REQUIRED", Map.of("pw", password));
        } catch (RuntimeException exc) {
            String message = String.valueOf(exc.getMessage()).toLowerCase();
            if (!message.contains("same")) {
                System.err.println("NEORAG_NEO4J_PASSWORD_FAILED " + exc.getMessage());
                dbms.shutdown();
                System.exit(3);
            }
        }
    }
}
