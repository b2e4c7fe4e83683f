// DevCatalog: entry point of the development/test Iceberg REST catalog. It parses the flags,
// builds the backing catalog (Iceberg's InMemoryCatalog, or JdbcCatalog on SQLite with --jdbc),
// both with LocalFileIO on a file:// warehouse, and serves CatalogRouter on the JDK HttpServer.
//
// Flags: --port N (0 = any free port)  --host ADDR (127.0.0.1)  --warehouse DIR (required)
//        --prefix NAME (only this prefix is accepted and advertised; default: any prefix or none;
//        env DEV_CATALOG_PREFIX)  --jdbc FILE.db (persistent SQLite catalog)  --quiet
//        --vend FILE.json (vend the FAKE credentials in FILE and serve the scan-planning and
//        remote-signing fixtures; env DEV_CATALOG_VEND; format in CredentialVending)
//        --s3-endpoint URL (env DEV_CATALOG_S3_ENDPOINT: s3:// locations are read and written
//        with Iceberg's S3FileIO at URL, path-style; --warehouse may then be s3://BUCKET/PATH;
//        DevFileIO)
// As Apache's iceberg-rest-fixture image does, env CATALOG_REST_PORT, CATALOG_WAREHOUSE (a
// file:// URI or a path) and CATALOG_URI (jdbc:sqlite:FILE) stand for --port, --warehouse and
// --jdbc FILE, so that its image (scripts/image.sh) takes the place of the fixture in
// deploy/kubernetes/sidecar with the manifest's own env.
package org.apache.iceberg.rest;

import com.sun.net.httpserver.HttpServer;
import java.io.File;
import java.lang.reflect.Field;
import java.net.InetSocketAddress;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Executors;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.inmemory.InMemoryCatalog;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.jdbc.JdbcCatalog;

public final class DevCatalog {
  private DevCatalog() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> flags = new HashMap<>();
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      if (a.equals("--quiet")) {
        flags.put("quiet", "true");
      } else if (a.startsWith("--") && i + 1 < args.length) {
        flags.put(a.substring(2), args[++i]);
      } else {
        throw new IllegalArgumentException("Unknown argument: " + a);
      }
    }
    int port = Integer.parseInt(flags.getOrDefault("port", envOr("CATALOG_REST_PORT", "8181")));
    String host = flags.getOrDefault("host", "127.0.0.1");
    String prefix = flags.getOrDefault("prefix", System.getenv("DEV_CATALOG_PREFIX"));
    if (prefix != null && prefix.isEmpty()) {
      prefix = null;
    }
    String uriEnv = envOr("CATALOG_URI", "");
    if (!flags.containsKey("jdbc") && uriEnv.startsWith("jdbc:sqlite:")) {
      flags.put("jdbc", uriEnv.substring("jdbc:sqlite:".length()));
    } else if (!uriEnv.isEmpty() && !flags.containsKey("jdbc")) {
      throw new IllegalArgumentException("CATALOG_URI: only jdbc:sqlite:FILE is supported: " + uriEnv);
    }
    String warehouseEnv = envOr("CATALOG_WAREHOUSE", "");
    if (!flags.containsKey("warehouse") && !warehouseEnv.isEmpty()) {
      flags.put("warehouse", warehouseEnv.startsWith("file:") ? new java.net.URI(warehouseEnv).getPath() : warehouseEnv);
    }
    if (!flags.containsKey("warehouse")) {
      throw new IllegalArgumentException("--warehouse DIR (or env CATALOG_WAREHOUSE) is required");
    }
    String vendFile = flags.getOrDefault("vend", System.getenv("DEV_CATALOG_VEND"));
    CredentialVending vending =
        vendFile == null || vendFile.isEmpty() ? null : CredentialVending.load(new File(vendFile));
    String s3Endpoint = flags.getOrDefault("s3-endpoint", envOr("DEV_CATALOG_S3_ENDPOINT", ""));
    String warehouse;
    if (!s3Endpoint.isEmpty() && flags.get("warehouse").startsWith("s3://")) {
      warehouse = flags.get("warehouse");
    } else {
      File warehouseDir = new File(flags.get("warehouse")).getAbsoluteFile();
      if (!warehouseDir.isDirectory() && !warehouseDir.mkdirs()) {
        throw new IllegalArgumentException("Cannot create warehouse " + warehouseDir);
      }
      warehouse = "file://" + warehouseDir.getPath();
    }

    Map<String, String> props = new HashMap<>();
    if (!s3Endpoint.isEmpty()) {
      props.putAll(DevFileIO.s3Properties(s3Endpoint));
    }
    props.put(CatalogProperties.WAREHOUSE_LOCATION, warehouse);
    Catalog catalog;
    if (flags.containsKey("jdbc")) {
      Class.forName("org.sqlite.JDBC");
      props.put(CatalogProperties.URI, "jdbc:sqlite:" + new File(flags.get("jdbc")).getAbsolutePath());
      props.put("jdbc.schema-version", "V1"); // V1 adds views to the JDBC catalog schema
      props.put(CatalogProperties.CLIENT_POOL_SIZE, "1"); // SQLite: one writer at a time
      JdbcCatalog jdbc = new JdbcCatalog(p -> newFileIO(p, s3Endpoint), null, true);
      jdbc.initialize("dev", props);
      catalog = jdbc;
    } else {
      InMemoryCatalog memory = new InMemoryCatalog();
      memory.initialize("dev", props);
      // InMemoryCatalog hard-wires InMemoryFileIO (metadata only in memory); put metadata files
      // on the local warehouse instead, so engines can read them.
      Field io = InMemoryCatalog.class.getDeclaredField("io");
      io.setAccessible(true);
      io.set(memory, newFileIO(props, s3Endpoint));
      catalog = memory;
    }

    Map<String, String> defaults = new HashMap<>();
    defaults.put(CatalogProperties.WAREHOUSE_LOCATION, warehouse);
    CatalogRouter router =
        new CatalogRouter(catalog, prefix, defaults, flags.containsKey("quiet"), vending);

    HttpServer server = HttpServer.create(new InetSocketAddress(host, port), 64);
    server.createContext("/", router);
    server.setExecutor(Executors.newFixedThreadPool(8));
    server.start();
    System.out.println(
        "dev-catalog listening on http://" + host + ":" + server.getAddress().getPort()
            + " (warehouse " + warehouse + ", "
            + (flags.containsKey("jdbc") ? "jdbc " + flags.get("jdbc") : "in-memory")
            + (prefix != null ? ", prefix " + prefix : "")
            + (vending != null ? ", vend " + vendFile : "")
            + (s3Endpoint.isEmpty() ? "" : ", s3 " + s3Endpoint) + ")");
    System.out.flush();
  }

  private static String envOr(String name, String fallback) {
    String value = System.getenv(name);
    return value == null || value.isEmpty() ? fallback : value;
  }

  private static FileIO newFileIO(Map<String, String> props, String s3Endpoint) {
    FileIO io = s3Endpoint.isEmpty() ? new LocalFileIO() : new DevFileIO();
    io.initialize(props);
    return io;
  }
}
