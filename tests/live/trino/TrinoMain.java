// TrinoMain: starts a Trino server from trino-main's jars, as trino-server-main's TrinoServer
// does (that one-class artifact is not published to Maven Central; trino-main is).
// Used by tests/live/trino.sh.
import io.trino.server.Server;

public final class TrinoMain {
  private TrinoMain() {}

  public static void main(String[] args) {
    String version = System.getProperty("icegate.trino.version", "unknown");
    new Server().start(version);
  }
}
