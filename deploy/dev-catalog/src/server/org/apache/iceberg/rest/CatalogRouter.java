// CatalogRouter: the HTTP side of the dev catalog. It maps each Iceberg REST route (OpenAPI
// /v1/...) onto the static methods of Iceberg's own org.apache.iceberg.rest.CatalogHandlers, reads
// and writes bodies with Iceberg's REST object mapper, and answers errors through ErrorMapper.
// It lives in package org.apache.iceberg.rest to reach two package-private helpers:
// RESTObjectMapper.mapper() and CatalogHandlers.commit (used for multi-table transactions).
//
// With --vend (CredentialVending) it also serves test fixtures that 1.10.2's CatalogHandlers lack:
// vended FAKE credentials, scan planning that plans no tasks, and a FAKE remote signer whose
// requests are recorded for GET /dev/sign-log. Without --vend none of that exists.
package org.apache.iceberg.rest;

import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.BaseTransaction;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.Transaction;
import org.apache.iceberg.Transactions;
import org.apache.iceberg.aws.s3.signer.S3SignRequest;
import org.apache.iceberg.aws.s3.signer.S3SignRequestParser;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.catalog.ViewCatalog;
import org.apache.iceberg.exceptions.BadRequestException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.exceptions.NotFoundException;
import org.apache.iceberg.rest.credentials.Credential;
import org.apache.iceberg.rest.requests.CommitTransactionRequest;
import org.apache.iceberg.rest.requests.CreateNamespaceRequest;
import org.apache.iceberg.rest.requests.CreateTableRequest;
import org.apache.iceberg.rest.requests.CreateViewRequest;
import org.apache.iceberg.rest.requests.FetchScanTasksRequest;
import org.apache.iceberg.rest.requests.PlanTableScanRequest;
import org.apache.iceberg.rest.requests.RegisterTableRequest;
import org.apache.iceberg.rest.requests.RenameTableRequest;
import org.apache.iceberg.rest.requests.ReportMetricsRequest;
import org.apache.iceberg.rest.requests.UpdateNamespacePropertiesRequest;
import org.apache.iceberg.rest.requests.UpdateTableRequest;
import org.apache.iceberg.rest.responses.ConfigResponse;
import org.apache.iceberg.rest.responses.ErrorResponse;
import org.apache.iceberg.rest.responses.FetchPlanningResultResponse;
import org.apache.iceberg.rest.responses.FetchScanTasksResponse;
import org.apache.iceberg.rest.responses.ImmutableLoadCredentialsResponse;
import org.apache.iceberg.rest.responses.LoadTableResponse;
import org.apache.iceberg.rest.responses.PlanTableScanResponse;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.JsonNode;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.node.ObjectNode;

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

  /**
   * Also advertised with --vend. Spelled out from the OpenAPI spec: Iceberg 1.10.2's
   * Endpoint.V1_*_TABLE_SCAN_PLAN* constants lack the "namespaces/{namespace}/" part.
   */
  private static final List<Endpoint> VEND_ENDPOINTS =
      List.of(
          Endpoint.create("POST", "/v1/{prefix}/namespaces/{namespace}/tables/{table}/plan"),
          Endpoint.create("GET", "/v1/{prefix}/namespaces/{namespace}/tables/{table}/plan/{plan-id}"),
          Endpoint.create(
              "DELETE", "/v1/{prefix}/namespaces/{namespace}/tables/{table}/plan/{plan-id}"),
          Endpoint.create("POST", "/v1/{prefix}/namespaces/{namespace}/tables/{table}/tasks"),
          Endpoint.create("POST", "/v1/{prefix}/namespaces/{namespace}/tables/{table}/sign"));

  /** RemoteSignRequest.method in the spec. */
  private static final Set<String> SIGN_METHODS =
      Set.of("PUT", "GET", "HEAD", "POST", "DELETE", "PATCH", "OPTIONS");

  /**
   * The fake signature: recognisable, and never valid for any store. Like a real SigV4 signer it
   * names every header it was given among the signed ones (`x-amz-content-sha256` included, which
   * binds a batch delete's body), with `host`.
   */
  private static final String FAKE_AUTHORIZATION =
      "AWS4-HMAC-SHA256 Credential=dev-catalog/20260101/%s/s3/aws4_request, SignedHeaders=%s, "
          + "Signature=dev-catalog-fake-signature";

  /** 404 for an unknown plan id; ErrorMapper reports the simple class name as the error type. */
  static final class NoSuchPlanIdException extends NotFoundException {
    NoSuchPlanIdException(String planId) {
      super("The plan id does not exist: %s", planId);
    }
  }

  /**
   * A response: HTTP status, an optional body (a RESTResponse or a Jackson tree, serialized as
   * JSON) and extra response headers.
   */
  private static final class Reply {
    final int status;
    final Object body;
    final Map<String, String> headers;

    Reply(int status, Object body) {
      this(status, body, Map.of());
    }

    Reply(int status, Object body, Map<String, String> headers) {
      this.status = status;
      this.body = body;
      this.headers = headers;
    }
  }

  private static final Reply NO_CONTENT = new Reply(204, null);

  private final Catalog catalog;
  private final SupportsNamespaces namespaces;
  private final ViewCatalog views;
  private final String requiredPrefix; // null: accept any prefix (or none)
  private final Map<String, String> configDefaults;
  private final boolean quiet;
  private final CredentialVending vending; // null: no --vend, none of the fixtures below
  private final ObjectMapper mapper = RESTObjectMapper.mapper();
  /** Plan ids handed out by POST .../plan and not yet cancelled, with the table they plan. */
  private final Map<String, TableIdentifier> plans = new ConcurrentHashMap<>();
  private final AtomicInteger planCounter = new AtomicInteger();
  /** Every sign request received, in arrival order, for GET /dev/sign-log. */
  private final List<Map<String, String>> signLog = new ArrayList<>();

  CatalogRouter(
      Catalog catalog,
      String requiredPrefix,
      Map<String, String> configDefaults,
      boolean quiet,
      CredentialVending vending) {
    this.catalog = catalog;
    this.namespaces = (SupportsNamespaces) catalog;
    this.views = (ViewCatalog) catalog;
    this.requiredPrefix = requiredPrefix;
    this.configDefaults = configDefaults;
    this.quiet = quiet;
    this.vending = vending;
  }

  @Override
  public void handle(HttpExchange exchange) throws IOException {
    String method = exchange.getRequestMethod();
    String rawPath = exchange.getRequestURI().getRawPath();
    Reply reply;
    try {
      byte[] body = exchange.getRequestBody().readAllBytes();
      reply =
          route(
              method,
              rawPath,
              parseQuery(exchange.getRequestURI().getRawQuery()),
              body,
              exchange.getRequestHeaders());
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
    reply.headers.forEach(exchange.getResponseHeaders()::set);
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

  private Reply route(
      String method, String rawPath, Map<String, String> query, byte[] body, Headers headers) {
    List<String> seg = new ArrayList<>(Arrays.asList(rawPath.split("/")));
    seg.removeIf(String::isEmpty);
    if (vending != null && seg.equals(List.of("dev", "sign-log"))) {
      return signLog(method, rawPath);
    }
    if (seg.isEmpty() || !seg.get(0).equals("v1")) {
      return noRoute(method, rawPath);
    }
    seg.remove(0);
    String rawPrefix = ""; // as in the path, for the {prefix} placeholder of --vend
    if (!seg.isEmpty() && !ROUTE_ROOTS.contains(seg.get(0))) {
      rawPrefix = seg.remove(0);
      String prefix = RESTUtil.decodeString(rawPrefix);
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
      List<Endpoint> endpoints = new ArrayList<>(ENDPOINTS);
      if (vending != null) {
        endpoints.addAll(VEND_ENDPOINTS);
      }
      return new Reply(200, config.withEndpoints(endpoints).build());
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
      String rawNs = p[1]; // as in the path, for the {namespace} placeholder of --vend
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
        RegisterTableRequest request = parse(body, RegisterTableRequest.class);
        return new Reply(
            200,
            vendIfRequested(
                CatalogHandlers.registerTable(catalog, ns, request),
                headers, rawPrefix, rawNs, request.name()));
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
            LoadTableResponse created =
                request.stageCreate()
                    ? CatalogHandlers.stageTableCreate(catalog, ns, request)
                    : CatalogHandlers.createTable(catalog, ns, request);
            return new Reply(
                200, vendIfRequested(created, headers, rawPrefix, rawNs, request.name()));
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
              return new Reply(
                  200,
                  vendIfRequested(
                      CatalogHandlers.loadTable(catalog, ident),
                      headers, rawPrefix, rawNs, ident.name()));
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
          // CatalogHandlers 1.10.2 has no loadCredentials. Without --vend nothing is vended; with it,
          // always (the caller asked for credentials). planId and referenced-by are accepted.
          if (vending == null) {
            CatalogHandlers.tableExists(catalog, ident);
            return new Reply(200, ImmutableLoadCredentialsResponse.builder().build());
          }
          TableMetadata metadata = CatalogHandlers.loadTable(catalog, ident).tableMetadata();
          return new Reply(
              200,
              ImmutableLoadCredentialsResponse.builder()
                  .addAllCredentials(vended(metadata, rawPrefix, rawNs, ident))
                  .build());
        }
        if (vending != null) {
          Reply fixture = vendFixture(method, p, body, rawPrefix, rawNs, ident);
          if (fixture != null) {
            return fixture;
          }
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
   * The handler's LoadTableResponse plus, when --vend is set and the request asks for them (or the
   * file says "always"), the vended config (merged over the handler's) and storage-credentials.
   * Rebuilt with Iceberg's own builder, so it serializes through LoadTableResponseParser as before:
   * withTableMetadata takes metadata-location from the metadata, as the handlers do.
   */
  private LoadTableResponse vendIfRequested(
      LoadTableResponse response, Headers headers, String rawPrefix, String rawNs, String table) {
    if (vending == null || !vending.requested(headers)) {
      return response;
    }
    Map<String, String> vars =
        CredentialVending.vars(response.tableMetadata().location(), table, rawNs, rawPrefix);
    Map<String, String> config = new LinkedHashMap<>(response.config());
    config.putAll(vending.config(vars));
    List<Credential> credentials = new ArrayList<>(response.credentials());
    credentials.addAll(vending.credentials(vars));
    return LoadTableResponse.builder()
        .withTableMetadata(response.tableMetadata())
        .addAllConfig(config)
        .addAllCredentials(credentials)
        .build();
  }

  private List<Credential> vended(
      TableMetadata metadata, String rawPrefix, String rawNs, TableIdentifier ident) {
    return vending.credentials(
        CredentialVending.vars(metadata.location(), ident.name(), rawNs, rawPrefix));
  }

  /**
   * The --vend fixtures under tables/{t}: scan planning (plan, plan/{id}, tasks) and remote
   * signing (sign). Null when the path is none of them. The table must exist (404 otherwise).
   */
  private Reply vendFixture(
      String method, String[] p, byte[] body, String rawPrefix, String rawNs, TableIdentifier ident) {
    int n = p.length;
    if (n == 5 && p[4].equals("plan") && method.equals("POST")) {
      // The body is optional in the spec; when present it must parse. No real planning happens:
      // the plan is "completed" at once with no tasks.
      if (body.length > 0) {
        parse(body, PlanTableScanRequest.class);
      }
      TableMetadata metadata = CatalogHandlers.loadTable(catalog, ident).tableMetadata();
      String planId = "plan-" + planCounter.incrementAndGet();
      plans.put(planId, ident);
      PlanTableScanResponse response =
          PlanTableScanResponse.builder()
              .withPlanStatus(PlanStatus.COMPLETED)
              .withPlanId(planId)
              .withPlanTasks(List.of())
              .withFileScanTasks(List.of())
              .withDeleteFiles(List.of())
              .withSpecsById(metadata.specsById())
              .build();
      return new Reply(200, scanResult(response, vended(metadata, rawPrefix, rawNs, ident)));
    }
    if (n == 6 && p[4].equals("plan") && (method.equals("GET") || method.equals("DELETE"))) {
      TableMetadata metadata = CatalogHandlers.loadTable(catalog, ident).tableMetadata();
      String planId = RESTUtil.decodeString(p[5]);
      if (!ident.equals(plans.get(planId))) {
        throw new NoSuchPlanIdException(planId);
      }
      if (method.equals("DELETE")) {
        plans.remove(planId);
        return NO_CONTENT;
      }
      FetchPlanningResultResponse response =
          FetchPlanningResultResponse.builder()
              .withPlanStatus(PlanStatus.COMPLETED)
              .withPlanTasks(List.of())
              .withFileScanTasks(List.of())
              .withDeleteFiles(List.of())
              .withSpecsById(metadata.specsById())
              .build();
      return new Reply(200, scanResult(response, vended(metadata, rawPrefix, rawNs, ident)));
    }
    if (n == 5 && p[4].equals("tasks") && method.equals("POST")) {
      CatalogHandlers.tableExists(catalog, ident);
      parse(body, FetchScanTasksRequest.class); // plan-task is required; any value is accepted
      FetchScanTasksResponse response =
          FetchScanTasksResponse.builder()
              .withFileScanTasks(List.of())
              .withDeleteFiles(List.of())
              .build();
      return new Reply(200, scanResult(response, null));
    }
    if (n == 5 && p[4].equals("sign") && method.equals("POST")) {
      CatalogHandlers.tableExists(catalog, ident);
      return sign(body, ident);
    }
    return null;
  }

  /**
   * A scan-planning response as Iceberg 1.10.2 serializes it, plus what its parser leaves out: an
   * empty "delete-files" and (for plan results, as CompletedPlanningResult allows) the vended
   * "storage-credentials".
   */
  private ObjectNode scanResult(RESTResponse response, List<Credential> credentials) {
    ObjectNode json = mapper.valueToTree(response);
    if (!json.has("delete-files")) {
      json.putArray("delete-files");
    }
    if (credentials != null) {
      ArrayNode array = json.putArray("storage-credentials");
      for (Credential credential : credentials) {
        ObjectNode entry = array.addObject().put("prefix", credential.prefix());
        ObjectNode config = entry.putObject("config");
        credential.config().forEach(config::put);
      }
    }
    return json;
  }

  /**
   * FAKE remote signing: checks the RemoteSignRequest (the spec's fields; Iceberg's
   * S3SignRequestParser for region, uri, method, headers, properties, body), records it for
   * /dev/sign-log and answers the request's uri and headers plus a fake Authorization header.
   */
  private Reply sign(byte[] body, TableIdentifier ident) {
    JsonNode json;
    S3SignRequest request;
    try {
      json = mapper.readTree(body);
      if (json == null || !json.isObject()) {
        throw new IllegalArgumentException("request body must be a JSON object");
      }
      request = S3SignRequestParser.fromJson(json);
    } catch (IOException | IllegalArgumentException e) {
      throw new BadRequestException(e, "Invalid RemoteSignRequest: %s", e.getMessage());
    }
    if (!SIGN_METHODS.contains(request.method())) {
      throw new BadRequestException("Invalid RemoteSignRequest: unknown method %s", request.method());
    }
    if (json.has("provider") && !json.get("provider").isTextual()) {
      throw new BadRequestException("Invalid RemoteSignRequest: provider must be a string");
    }
    String uri = json.get("uri").asText(); // echoed exactly as sent
    Map<String, String> entry = new LinkedHashMap<>();
    entry.put("table", ident.toString());
    entry.put("method", request.method());
    entry.put("uri", uri);
    synchronized (signLog) {
      signLog.add(entry);
    }
    ObjectNode result = mapper.createObjectNode().put("uri", uri);
    ObjectNode signed = result.putObject("headers");
    // The request's headers, in the order sent (the parser has checked they are string lists).
    java.util.TreeSet<String> names = new java.util.TreeSet<>(List.of("host"));
    json.get("headers").fields().forEachRemaining(header -> {
      if (!header.getKey().equalsIgnoreCase("Authorization")) { // replaced by the signature below
        signed.set(header.getKey(), header.getValue());
        names.add(header.getKey().toLowerCase(java.util.Locale.ROOT));
      }
    });
    signed.putArray("Authorization")
        .add(String.format(FAKE_AUTHORIZATION, request.region(), String.join(";", names)));
    // The spec's RemoteSignResponse carries Cache-Control; a fake signature is not worth caching.
    return new Reply(200, result, Map.of("Cache-Control", "no-cache"));
  }

  /** GET /dev/sign-log: the recorded sign requests; DELETE clears them (for tests that reuse it). */
  private Reply signLog(String method, String rawPath) {
    synchronized (signLog) {
      switch (method) {
        case "GET":
          return new Reply(200, mapper.valueToTree(new ArrayList<>(signLog)));
        case "DELETE":
          signLog.clear();
          return NO_CONTENT;
        default:
          return noRoute(method, rawPath);
      }
    }
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
