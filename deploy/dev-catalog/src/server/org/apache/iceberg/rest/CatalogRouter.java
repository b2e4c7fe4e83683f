// CatalogRouter: the HTTP side of the dev catalog. It maps each Iceberg REST route (OpenAPI
// /v1/...) onto the static methods of Iceberg's own org.apache.iceberg.rest.CatalogHandlers, reads
// and writes bodies with Iceberg's REST object mapper, and answers errors through ErrorMapper.
// It lives in package org.apache.iceberg.rest to reach two package-private helpers:
// RESTObjectMapper.mapper() and CatalogHandlers.commit (used for multi-table transactions).
package org.apache.iceberg.rest;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.BaseTransaction;
import org.apache.iceberg.Table;
import org.apache.iceberg.Transaction;
import org.apache.iceberg.Transactions;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.catalog.ViewCatalog;
import org.apache.iceberg.exceptions.BadRequestException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.rest.requests.CommitTransactionRequest;
import org.apache.iceberg.rest.requests.CreateNamespaceRequest;
import org.apache.iceberg.rest.requests.CreateTableRequest;
import org.apache.iceberg.rest.requests.CreateViewRequest;
import org.apache.iceberg.rest.requests.RegisterTableRequest;
import org.apache.iceberg.rest.requests.RenameTableRequest;
import org.apache.iceberg.rest.requests.ReportMetricsRequest;
import org.apache.iceberg.rest.requests.UpdateNamespacePropertiesRequest;
import org.apache.iceberg.rest.requests.UpdateTableRequest;
import org.apache.iceberg.rest.responses.ConfigResponse;
import org.apache.iceberg.rest.responses.ErrorResponse;
import org.apache.iceberg.rest.responses.ImmutableLoadCredentialsResponse;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.ObjectMapper;

final class CatalogRouter implements HttpHandler {
  /** First path segments after /v1 that start a route; anything else there is a prefix. */
  private static final Set<String> ROUTE_ROOTS =
      Set.of("config", "oauth", "namespaces", "tables", "views", "transactions");

  /** Endpoints advertised by GET /v1/config: all that this server serves. */
  private static final List<Endpoint> ENDPOINTS =
      List.of(
          Endpoint.V1_LIST_NAMESPACES,
          Endpoint.V1_LOAD_NAMESPACE,
          Endpoint.V1_NAMESPACE_EXISTS,
          Endpoint.V1_CREATE_NAMESPACE,
          Endpoint.V1_UPDATE_NAMESPACE,
          Endpoint.V1_DELETE_NAMESPACE,
          Endpoint.V1_COMMIT_TRANSACTION,
          Endpoint.V1_LIST_TABLES,
          Endpoint.V1_LOAD_TABLE,
          Endpoint.V1_TABLE_EXISTS,
          Endpoint.V1_CREATE_TABLE,
          Endpoint.V1_UPDATE_TABLE,
          Endpoint.V1_DELETE_TABLE,
          Endpoint.V1_RENAME_TABLE,
          Endpoint.V1_REGISTER_TABLE,
          Endpoint.V1_REPORT_METRICS,
          Endpoint.V1_TABLE_CREDENTIALS,
          Endpoint.V1_LIST_VIEWS,
          Endpoint.V1_LOAD_VIEW,
          Endpoint.V1_VIEW_EXISTS,
          Endpoint.V1_CREATE_VIEW,
          Endpoint.V1_UPDATE_VIEW,
          Endpoint.V1_DELETE_VIEW,
          Endpoint.V1_RENAME_VIEW);

  /** A response: HTTP status and an optional body (a RESTResponse, serialized as JSON). */
  private static final class Reply {
    final int status;
    final Object body;

    Reply(int status, Object body) {
      this.status = status;
      this.body = body;
    }
  }

  private static final Reply NO_CONTENT = new Reply(204, null);

  private final Catalog catalog;
  private final SupportsNamespaces namespaces;
  private final ViewCatalog views;
  private final String requiredPrefix; // null: accept any prefix (or none)
  private final Map<String, String> configDefaults;
  private final boolean quiet;
  private final ObjectMapper mapper = RESTObjectMapper.mapper();

  CatalogRouter(
      Catalog catalog, String requiredPrefix, Map<String, String> configDefaults, boolean quiet) {
    this.catalog = catalog;
    this.namespaces = (SupportsNamespaces) catalog;
    this.views = (ViewCatalog) catalog;
    this.requiredPrefix = requiredPrefix;
    this.configDefaults = configDefaults;
    this.quiet = quiet;
  }

  @Override
  public void handle(HttpExchange exchange) throws IOException {
    String method = exchange.getRequestMethod();
    String rawPath = exchange.getRequestURI().getRawPath();
    Reply reply;
    try {
      byte[] body = exchange.getRequestBody().readAllBytes();
      reply = route(method, rawPath, parseQuery(exchange.getRequestURI().getRawQuery()), body);
    } catch (RuntimeException | Error e) {
      ErrorResponse error = ErrorMapper.toResponse(e);
      if (error.code() >= 500) {
        e.printStackTrace();
      }
      reply = new Reply(error.code(), error);
    }
    if (!quiet) {
      System.out.println(method + " " + exchange.getRequestURI() + " -> " + reply.status);
    }
    send(exchange, method, reply);
  }

  private void send(HttpExchange exchange, String method, Reply reply) throws IOException {
    byte[] bytes = reply.body == null ? null : toJson(reply.body);
    if (bytes != null) {
      exchange.getResponseHeaders().set("Content-Type", "application/json");
    }
    boolean noBody = bytes == null || "HEAD".equals(method) || reply.status == 204;
    exchange.sendResponseHeaders(reply.status, noBody ? -1 : bytes.length);
    if (!noBody) {
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(bytes);
      }
    }
    exchange.close();
  }

  private byte[] toJson(Object value) {
    try {
      return mapper.writeValueAsBytes(value);
    } catch (IOException e) {
      throw new IllegalStateException("Cannot serialize response", e);
    }
  }

  private <T extends RESTRequest> T parse(byte[] body, Class<T> type) {
    T request;
    try {
      request = mapper.readValue(body, type);
    } catch (IOException e) {
      throw new BadRequestException(e, "Invalid %s: %s", type.getSimpleName(), e.getMessage());
    }
    if (request == null) {
      throw new BadRequestException("Missing request body for %s", type.getSimpleName());
    }
    request.validate();
    return request;
  }

  private static Map<String, String> parseQuery(String rawQuery) {
    Map<String, String> query = new HashMap<>();
    if (rawQuery == null || rawQuery.isEmpty()) {
      return query;
    }
    for (String pair : rawQuery.split("&")) {
      String[] kv = pair.split("=", 2);
      String key = RESTUtil.decodeString(kv[0]);
      // Namespaces in query strings keep their %1F separators: decoded by RESTUtil.decodeNamespace.
      query.put(key, kv.length > 1 ? kv[1] : "");
    }
    return query;
  }

  private static String decoded(Map<String, String> query, String key) {
    String raw = query.get(key);
    return raw == null ? null : RESTUtil.decodeString(raw);
  }

  private Reply route(String method, String rawPath, Map<String, String> query, byte[] body) {
    List<String> seg = new ArrayList<>(Arrays.asList(rawPath.split("/")));
    seg.removeIf(String::isEmpty);
    if (seg.isEmpty() || !seg.get(0).equals("v1")) {
      return noRoute(method, rawPath);
    }
    seg.remove(0);
    if (!seg.isEmpty() && !ROUTE_ROOTS.contains(seg.get(0))) {
      String prefix = RESTUtil.decodeString(seg.remove(0));
      if (requiredPrefix != null && !requiredPrefix.equals(prefix)) {
        return noRoute(method, rawPath);
      }
    }
    String[] p = seg.toArray(new String[0]);
    int n = p.length;

    if (n == 1 && p[0].equals("config") && method.equals("GET")) {
      ConfigResponse.Builder config = ConfigResponse.builder().withDefaults(configDefaults);
      if (requiredPrefix != null) {
        config.withOverride("prefix", requiredPrefix);
      }
      return new Reply(200, config.withEndpoints(ENDPOINTS).build());
    }

    if (n >= 1 && p[0].equals("namespaces")) {
      if (n == 1) {
        switch (method) {
          case "GET":
            Namespace parent =
                query.containsKey("parent")
                    ? RESTUtil.decodeNamespace(query.get("parent"))
                    : Namespace.empty();
            String pageToken = decoded(query, "pageToken");
            String pageSize = decoded(query, "pageSize");
            return new Reply(
                200,
                pageSize != null
                    ? CatalogHandlers.listNamespaces(namespaces, parent, emptyToNull(pageToken), pageSize)
                    : CatalogHandlers.listNamespaces(namespaces, parent));
          case "POST":
            return new Reply(
                200,
                CatalogHandlers.createNamespace(namespaces, parse(body, CreateNamespaceRequest.class)));
          default:
            return noRoute(method, rawPath);
        }
      }
      Namespace ns = RESTUtil.decodeNamespace(p[1]);
      if (n == 2) {
        switch (method) {
          case "GET":
            return new Reply(200, CatalogHandlers.loadNamespace(namespaces, ns));
          case "HEAD":
            CatalogHandlers.namespaceExists(namespaces, ns);
            return NO_CONTENT;
          case "DELETE":
            CatalogHandlers.dropNamespace(namespaces, ns);
            return NO_CONTENT;
          default:
            return noRoute(method, rawPath);
        }
      }
      if (n == 3 && p[2].equals("properties") && method.equals("POST")) {
        return new Reply(
            200,
            CatalogHandlers.updateNamespaceProperties(
                namespaces, ns, parse(body, UpdateNamespacePropertiesRequest.class)));
      }
      if (n == 3 && p[2].equals("register") && method.equals("POST")) {
        return new Reply(
            200, CatalogHandlers.registerTable(catalog, ns, parse(body, RegisterTableRequest.class)));
      }
      if (n == 3 && p[2].equals("tables")) {
        switch (method) {
          case "GET":
            String pageToken = decoded(query, "pageToken");
            String pageSize = decoded(query, "pageSize");
            return new Reply(
                200,
                pageSize != null
                    ? CatalogHandlers.listTables(catalog, ns, emptyToNull(pageToken), pageSize)
                    : CatalogHandlers.listTables(catalog, ns));
          case "POST":
            CreateTableRequest request = parse(body, CreateTableRequest.class);
            return new Reply(
                200,
                request.stageCreate()
                    ? CatalogHandlers.stageTableCreate(catalog, ns, request)
                    : CatalogHandlers.createTable(catalog, ns, request));
          default:
            return noRoute(method, rawPath);
        }
      }
      if (n == 3 && p[2].equals("views")) {
        switch (method) {
          case "GET":
            String pageToken = decoded(query, "pageToken");
            String pageSize = decoded(query, "pageSize");
            return new Reply(
                200,
                pageSize != null
                    ? CatalogHandlers.listViews(views, ns, emptyToNull(pageToken), pageSize)
                    : CatalogHandlers.listViews(views, ns));
          case "POST":
            return new Reply(
                200, CatalogHandlers.createView(views, ns, parse(body, CreateViewRequest.class)));
          default:
            return noRoute(method, rawPath);
        }
      }
      if (n >= 4 && p[2].equals("tables")) {
        TableIdentifier ident = TableIdentifier.of(ns, RESTUtil.decodeString(p[3]));
        if (n == 4) {
          switch (method) {
            case "GET":
              // snapshots=all|refs is accepted; all snapshots are always returned (allowed by spec).
              return new Reply(200, CatalogHandlers.loadTable(catalog, ident));
            case "HEAD":
              CatalogHandlers.tableExists(catalog, ident);
              return NO_CONTENT;
            case "POST":
              return new Reply(
                  200,
                  CatalogHandlers.updateTable(catalog, ident, parse(body, UpdateTableRequest.class)));
            case "DELETE":
              if (Boolean.parseBoolean(decoded(query, "purgeRequested"))) {
                CatalogHandlers.purgeTable(catalog, ident);
              } else {
                CatalogHandlers.dropTable(catalog, ident);
              }
              return NO_CONTENT;
            default:
              return noRoute(method, rawPath);
          }
        }
        if (n == 5 && p[4].equals("metrics") && method.equals("POST")) {
          parse(body, ReportMetricsRequest.class);
          return NO_CONTENT;
        }
        if (n == 5 && p[4].equals("credentials") && method.equals("GET")) {
          // CatalogHandlers 1.10.2 has no loadCredentials; this catalog vends none.
          CatalogHandlers.tableExists(catalog, ident);
          return new Reply(200, ImmutableLoadCredentialsResponse.builder().build());
        }
        return noRoute(method, rawPath);
      }
      if (n == 4 && p[2].equals("views")) {
        TableIdentifier ident = TableIdentifier.of(ns, RESTUtil.decodeString(p[3]));
        switch (method) {
          case "GET":
            return new Reply(200, CatalogHandlers.loadView(views, ident));
          case "HEAD":
            CatalogHandlers.viewExists(views, ident);
            return NO_CONTENT;
          case "POST":
            return new Reply(
                200, CatalogHandlers.updateView(views, ident, parse(body, UpdateTableRequest.class)));
          case "DELETE":
            CatalogHandlers.dropView(views, ident);
            return NO_CONTENT;
          default:
            return noRoute(method, rawPath);
        }
      }
      return noRoute(method, rawPath);
    }

    if (n == 2 && p[0].equals("tables") && p[1].equals("rename") && method.equals("POST")) {
      CatalogHandlers.renameTable(catalog, parse(body, RenameTableRequest.class));
      return NO_CONTENT;
    }
    if (n == 2 && p[0].equals("views") && p[1].equals("rename") && method.equals("POST")) {
      CatalogHandlers.renameView(views, parse(body, RenameTableRequest.class));
      return NO_CONTENT;
    }
    if (n == 2 && p[0].equals("transactions") && p[1].equals("commit") && method.equals("POST")) {
      commitTransaction(parse(body, CommitTransactionRequest.class));
      return NO_CONTENT;
    }
    return noRoute(method, rawPath);
  }

  /**
   * Multi-table commit, as Iceberg's RESTCatalogAdapter does it: validate and apply every table's
   * changes in its own in-memory transaction first, then commit them all.
   */
  private void commitTransaction(CommitTransactionRequest request) {
    List<Transaction> transactions = new ArrayList<>();
    for (UpdateTableRequest change : request.tableChanges()) {
      Table table = catalog.loadTable(change.identifier());
      if (!(table instanceof BaseTable)) {
        throw new NoSuchTableException("Not an Iceberg table: %s", change.identifier());
      }
      Transaction tx =
          Transactions.newTransaction(
              change.identifier().toString(), ((BaseTable) table).operations());
      BaseTransaction.TransactionTable txTable = (BaseTransaction.TransactionTable) tx.table();
      CatalogHandlers.commit(txTable.operations(), change);
      transactions.add(tx);
    }
    transactions.forEach(Transaction::commitTransaction);
  }

  private static String emptyToNull(String s) {
    return s == null || s.isEmpty() ? null : s;
  }

  private static Reply noRoute(String method, String rawPath) {
    ErrorResponse error = ErrorMapper.noRoute(method, rawPath);
    return new Reply(error.code(), error);
  }
}
