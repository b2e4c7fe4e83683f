// TrinoWay: the catalog calls of Trino's Iceberg connector, made the way Trino makes them, with
// Iceberg's own Java REST client (RESTSessionCatalog of the Iceberg 1.10.2 runtime jar). Trino
// itself cannot be run here (docs/design.md §13); what reaches icegate from Trino is exactly
// these calls, so they are what tests/e2e/trino_way.sh checks.
//
// How Trino builds the client (trinodb/trino, plugin/trino-iceberg, io.trino.plugin.iceberg.
// catalog.rest; read at the commits named):
//  - IcebergRestCatalogPropertiesProvider (052509b2): uri, warehouse, prefix,
//    view-endpoints-supported, trino-version, auth session timeout, rest.client.max-retries (5),
//    then the security properties, then header.X-Iceberg-Access-Delegation when vended
//    credentials are on, then `header.<Name>` = <value> for every entry of
//    iceberg.rest-catalog.http-headers (IcebergRestCatalogConfig 02e3bc9f splits each entry at
//    its first `:` and keeps the value untrimmed, so ` analyst` goes out with its leading space,
//    which HTTP strips). It also sets a table-cache size that Iceberg 1.10.2 does not have.
//  - OAuth2SecurityProperties / OAuth2SecurityConfig (1cce6b48 / 3007cb4d): credential (and
//    scope only with a credential), token, oauth2-server-uri, token-refresh-enabled and
//    token-exchange-enabled (Iceberg's defaults unless set).
//  - TrinoIcebergRestCatalogFactory: one RESTSessionCatalog per Trino catalog, built with
//    HTTPClient.builder(config).uri(config.get("uri")).withHeaders(RESTUtil.configHeaders(config))
//    and Trino's own FileIO (here Hadoop's local file system, which reads the dev catalog's
//    file:// warehouse). The `withHeaders` matters: without it (as in the factory at 0f994703,
//    before http-headers existed) Iceberg 1.10.2 sends the header.* properties on getConfig only,
//    never on a catalog call, and no narrowing happens; tests/e2e/trino_way.sh fails that way.
//  - TrinoRestCatalog (00739263): with iceberg.rest-catalog.session=NONE (the default) every
//    call gets a SessionContext with a fresh random id and the credential/token as its
//    credentials, so Iceberg's OAuth2Manager fetches a token per call. SHOW SCHEMAS is
//    listNamespaces; SHOW TABLES is namespaceExists, then listTables and (view endpoints on)
//    listViews, a ForbiddenException on a listing being read as an empty list; SELECT is
//    loadTable (a view: loadView) and reading its data files; INSERT is loadTable, data files
//    written, and a transaction with a fast append committed (updateTable).
//
// Usage:
//   TrinoWay CATALOG.properties STATEMENT...   run statements through a Trino catalog file
//   TrinoWay --setup CATALOG_URI               create the fixture directly at the catalog
// Statements: "SHOW SCHEMAS", "SHOW TABLES s", "SELECT s.t", "INSERT s.t ID,ID,...".
// Prints one line per statement: `<statement> => OK <result>` or `<statement> => ERR <class>:
// <message>`; exits 2 on a usage or configuration error (a key of the catalog file that Trino's
// recipe would not map is refused, so the README's recipe cannot say what is not run here).
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.Transaction;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SessionCatalog.SessionContext;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericAppenderFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.encryption.EncryptedFiles;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.hadoop.HadoopFileIO;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.rest.HTTPClient;
import org.apache.iceberg.rest.RESTSessionCatalog;
import org.apache.iceberg.rest.RESTUtil;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.view.View;

public final class TrinoWay {
  static final Schema SCHEMA =
      new Schema(
          Types.NestedField.required(1, "id", Types.LongType.get()),
          Types.NestedField.optional(2, "event", Types.StringType.get()));

  /** The keys of a catalog file this program maps, each as Trino maps it; any other is refused. */
  static final Set<String> KNOWN =
      Set.of(
          "connector.name",
          "iceberg.catalog.type",
          "iceberg.rest-catalog.uri",
          "iceberg.rest-catalog.prefix",
          "iceberg.rest-catalog.warehouse",
          "iceberg.rest-catalog.security",
          "iceberg.rest-catalog.oauth2.credential",
          "iceberg.rest-catalog.oauth2.scope",
          "iceberg.rest-catalog.oauth2.token",
          "iceberg.rest-catalog.oauth2.server-uri",
          "iceberg.rest-catalog.http-headers",
          "iceberg.rest-catalog.vended-credentials-enabled",
          "iceberg.rest-catalog.view-endpoints-enabled");

  /** The Trino version sent as `trino-version` (the release that added http-headers). */
  static final String TRINO_VERSION = "481";

  public static void main(String[] args) throws Exception {
    if (args.length == 2 && args[0].equals("--setup")) {
      setup(args[1]);
      return;
    }
    if (args.length < 2) {
      usage("expected CATALOG.properties and at least one statement");
    }
    Properties file = new Properties();
    try (InputStream in = new FileInputStream(args[0])) {
      file.load(in);
    }
    Map<String, String> properties = trinoProperties(file);
    String credential = properties.get("credential");
    String token = properties.get("token");
    Map<String, String> credentials = new LinkedHashMap<>();
    if (credential != null) {
      credentials.put("credential", credential);
    }
    if (token != null) {
      credentials.put("token", token);
    }
    boolean views = Boolean.parseBoolean(properties.get("view-endpoints-supported"));
    try (RESTSessionCatalog catalog = open(args[0], properties)) {
      for (int i = 1; i < args.length; i++) {
        String statement = args[i];
        String result;
        try {
          result = "OK " + run(catalog, credentials, views, statement);
        } catch (RuntimeException e) {
          result = "ERR " + e.getClass().getName() + ": " + e.getMessage();
        }
        System.out.println(statement + " => " + result);
      }
    }
  }

  /** Trino's property map for a catalog file (see the header for where each key comes from). */
  static Map<String, String> trinoProperties(Properties file) {
    for (String key : file.stringPropertyNames()) {
      if (!KNOWN.contains(key)) {
        usage("catalog file key `" + key + "` is not one this program maps as Trino does");
      }
    }
    if (!"iceberg".equals(file.getProperty("connector.name"))
        || !"rest".equalsIgnoreCase(file.getProperty("iceberg.catalog.type", ""))) {
      usage("the catalog file must say connector.name=iceberg and iceberg.catalog.type=rest");
    }
    String uri = file.getProperty("iceberg.rest-catalog.uri");
    if (uri == null) {
      usage("iceberg.rest-catalog.uri is required");
    }
    Map<String, String> p = new LinkedHashMap<>();
    p.put("uri", uri);
    putIfSet(p, "warehouse", file.getProperty("iceberg.rest-catalog.warehouse"));
    putIfSet(p, "prefix", file.getProperty("iceberg.rest-catalog.prefix"));
    p.put(
        "view-endpoints-supported",
        file.getProperty("iceberg.rest-catalog.view-endpoints-enabled", "true"));
    p.put("trino-version", TRINO_VERSION);
    p.put("auth.session-timeout-ms", "3600000"); // CatalogProperties.AUTH_SESSION_TIMEOUT_MS_DEFAULT
    p.put("rest.client.max-retries", "5");
    String security = file.getProperty("iceberg.rest-catalog.security", "NONE");
    if (security.equalsIgnoreCase("OAUTH2")) {
      String credential = file.getProperty("iceberg.rest-catalog.oauth2.credential");
      String token = file.getProperty("iceberg.rest-catalog.oauth2.token");
      if (credential == null && token == null) {
        usage("OAuth2 requires a credential or token");
      }
      if (credential != null) {
        p.put("credential", credential);
        putIfSet(p, "scope", file.getProperty("iceberg.rest-catalog.oauth2.scope"));
      }
      putIfSet(p, "token", token);
      putIfSet(p, "oauth2-server-uri", file.getProperty("iceberg.rest-catalog.oauth2.server-uri"));
      p.put("token-refresh-enabled", "true");
      p.put("token-exchange-enabled", "true");
    } else if (!security.equalsIgnoreCase("NONE")) {
      usage("iceberg.rest-catalog.security `" + security + "` is not mapped here");
    }
    if (Boolean.parseBoolean(
        file.getProperty("iceberg.rest-catalog.vended-credentials-enabled", "false"))) {
      p.put("header.X-Iceberg-Access-Delegation", "vended-credentials");
    }
    String headers = file.getProperty("iceberg.rest-catalog.http-headers");
    if (headers != null) {
      // airlift splits a list property on `,` and trims each entry; Trino then splits at `:`.
      for (String entry : headers.split(",")) {
        String kv = entry.trim();
        if (kv.isEmpty()) {
          continue;
        }
        int colon = kv.indexOf(':');
        if (colon < 0) {
          usage("cannot parse iceberg.rest-catalog.http-headers entry `" + kv + "`");
        }
        p.put("header." + kv.substring(0, colon), kv.substring(colon + 1));
      }
    }
    return p;
  }

  static void putIfSet(Map<String, String> p, String key, String value) {
    if (value != null) {
      p.put(key, value);
    }
  }

  static RESTSessionCatalog open(String name, Map<String, String> properties) {
    RESTSessionCatalog catalog =
        new RESTSessionCatalog(
            config ->
                HTTPClient.builder(config)
                    .uri(config.get("uri"))
                    .withHeaders(RESTUtil.configHeaders(config))
                    .build(),
            (context, config) -> {
              FileIO io = new HadoopFileIO(new Configuration());
              io.initialize(config);
              return io;
            });
    catalog.initialize(name, properties);
    return catalog;
  }

  /** TrinoRestCatalog.convert for session type NONE. */
  static SessionContext session(Map<String, String> credentials) {
    return new SessionContext(UUID.randomUUID().toString(), null, credentials, Map.of(), null);
  }

  static String run(
      RESTSessionCatalog catalog, Map<String, String> credentials, boolean views, String statement) {
    String[] words = statement.trim().split("\\s+");
    if (statement.equals("SHOW SCHEMAS")) {
      Set<String> names = new TreeSet<>();
      for (Namespace ns : catalog.listNamespaces(session(credentials), Namespace.empty())) {
        names.add(String.join(".", ns.levels()));
      }
      return String.join(",", names);
    }
    if (words.length == 3 && words[0].equals("SHOW") && words[1].equals("TABLES")) {
      Namespace ns = Namespace.of(words[2]);
      if (!catalog.namespaceExists(session(credentials), ns)) {
        throw new IllegalStateException("Schema '" + words[2] + "' does not exist");
      }
      Set<String> names = new TreeSet<>();
      names.addAll(listed(() -> catalog.listTables(session(credentials), ns)));
      if (views) {
        names.addAll(listed(() -> catalog.listViews(session(credentials), ns)));
      }
      return String.join(",", names);
    }
    if (words.length == 2 && words[0].equals("SELECT")) {
      TableIdentifier id = TableIdentifier.parse(words[1]);
      Table table;
      try {
        table = catalog.loadTable(session(credentials), id);
      } catch (NoSuchTableException e) {
        View view = catalog.loadView(session(credentials), id);
        return "view " + view.sqlFor("trino").sql();
      }
      return rows(table);
    }
    if (words.length == 3 && words[0].equals("INSERT")) {
      TableIdentifier id = TableIdentifier.parse(words[1]);
      Table table = catalog.loadTable(session(credentials), id);
      List<Long> ids = new ArrayList<>();
      for (String v : words[2].split(",")) {
        ids.add(Long.parseLong(v));
      }
      DataFile file = write(table, ids);
      Transaction tx = table.newTransaction();
      tx.newFastAppend().appendFile(file).commit();
      tx.commitTransaction();
      return "inserted " + ids.size();
    }
    throw new IllegalArgumentException("unknown statement `" + statement + "`");
  }

  interface Listing {
    List<TableIdentifier> get();
  }

  /** TrinoRestCatalog.listTableIdentifiers: a refused listing is an empty one. */
  static List<String> listed(Listing listing) {
    List<String> names = new ArrayList<>();
    try {
      for (TableIdentifier id : listing.get()) {
        names.add(id.name());
      }
    } catch (org.apache.iceberg.exceptions.ForbiddenException e) {
      // Trino logs it at debug level and lists nothing
    }
    return names;
  }

  static String rows(Table table) {
    Set<Long> ids = new TreeSet<>();
    try (CloseableIterable<Record> records = IcebergGenerics.read(table).build()) {
      for (Record r : records) {
        ids.add((Long) r.getField("id"));
      }
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    List<String> out = new ArrayList<>();
    for (Long id : ids) {
      out.add(id.toString());
    }
    return "rows " + String.join(",", out);
  }

  static DataFile write(Table table, List<Long> ids) {
    GenericAppenderFactory factory = new GenericAppenderFactory(table.schema(), table.spec());
    OutputFile out =
        table.io().newOutputFile(table.locationProvider().newDataLocation(UUID.randomUUID() + ".parquet"));
    DataWriter<Record> writer =
        factory.newDataWriter(EncryptedFiles.plainAsEncryptedOutput(out), FileFormat.PARQUET, null);
    try (writer) {
      for (Long id : ids) {
        GenericRecord r = GenericRecord.create(table.schema());
        r.setField("id", id);
        r.setField("event", "e" + id);
        writer.write(r);
      }
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    return writer.toDataFile();
  }

  /** The fixture, created directly at the catalog (no icegate, no auth). */
  static void setup(String uri) {
    Map<String, String> p = Map.of("uri", uri);
    try (RESTSessionCatalog catalog = open("setup", p)) {
      SessionContext ctx = session(Map.of());
      for (String ns : List.of("sales", "staging", "hr")) {
        catalog.createNamespace(ctx, Namespace.of(ns), new java.util.HashMap<>());
      }
      for (String t : List.of("sales.events", "sales.salaries", "staging.events_raw", "hr.people")) {
        Table table =
            catalog.buildTable(ctx, TableIdentifier.parse(t), SCHEMA)
                .withPartitionSpec(PartitionSpec.unpartitioned())
                .create();
        DataFile file = write(table, List.of(1L, 2L));
        table.newFastAppend().appendFile(file).commit();
      }
      for (String v : List.of("sales.daily", "sales.payroll")) {
        catalog.buildView(ctx, TableIdentifier.parse(v))
            .withSchema(SCHEMA)
            .withDefaultNamespace(Namespace.of("sales"))
            .withQuery("trino", "SELECT id, event FROM events")
            .create();
      }
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    System.out.println("setup done");
  }

  static void usage(String message) {
    System.err.println("TrinoWay: " + message);
    System.exit(2);
  }
}
