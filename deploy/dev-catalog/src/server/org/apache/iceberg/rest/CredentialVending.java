// CredentialVending: the --vend fixture. It loads a JSON file of FAKE credentials once at startup
// and hands them out per table, with placeholders filled in, so that icegate's credential-vending
// tests can run against this real catalog. Nothing here is a real secret or talks to any store.
//
// File: {"always": false,                       (optional; true: vend without the delegation header)
//        "config": {"key": "value", ...},       (optional; merged into LoadTableResponse.config)
//        "storage-credentials": [{"prefix": "...", "config": {"key": "value", ...}}, ...]}  (optional)
// Placeholders in every value and prefix: {location} (the table's metadata location), {table}
// (table name), {namespace} (namespace as in the request path, still encoded, e.g. a%1Fb) and
// {prefix} (the request's prefix, or empty; then "v1/{prefix}/" becomes "v1/").
package org.apache.iceberg.rest;

import com.sun.net.httpserver.Headers;
import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.iceberg.rest.credentials.Credential;
import org.apache.iceberg.rest.credentials.CredentialParser;
import org.apache.iceberg.rest.credentials.ImmutableCredential;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.JsonNode;

final class CredentialVending {
  static final String DELEGATION_HEADER = "X-Iceberg-Access-Delegation";
  private static final Set<String> FILE_KEYS = Set.of("always", "config", "storage-credentials");
  private static final Pattern PLACEHOLDER = Pattern.compile("\\{(location|table|namespace|prefix)\\}");

  private final boolean always;
  private final Map<String, String> config; // templates, placeholders not yet filled in
  private final List<Credential> credentials; // templates

  private CredentialVending(boolean always, Map<String, String> config, List<Credential> credentials) {
    this.always = always;
    this.config = config;
    this.credentials = credentials;
  }

  /** Reads and checks the file; a malformed file stops the catalog at startup, not mid-test. */
  static CredentialVending load(File file) {
    JsonNode root;
    try {
      root = RESTObjectMapper.mapper().readTree(file);
    } catch (IOException e) {
      throw new IllegalArgumentException("Cannot read --vend file " + file + ": " + e.getMessage(), e);
    }
    if (root == null || !root.isObject()) {
      throw new IllegalArgumentException("--vend file " + file + ": must hold a JSON object");
    }
    for (Iterator<String> keys = root.fieldNames(); keys.hasNext(); ) {
      String key = keys.next();
      if (!FILE_KEYS.contains(key)) { // a typo would otherwise silently vend nothing
        throw new IllegalArgumentException("--vend file " + file + ": unknown key " + key);
      }
    }
    JsonNode always = root.path("always");
    if (!always.isMissingNode() && !always.isBoolean()) {
      throw new IllegalArgumentException("--vend file " + file + ": \"always\" must be a boolean");
    }
    Map<String, String> config = new LinkedHashMap<>();
    JsonNode configNode = root.path("config");
    if (!configNode.isMissingNode()) {
      if (!configNode.isObject()) {
        throw new IllegalArgumentException("--vend file " + file + ": \"config\" must be an object");
      }
      configNode.fields().forEachRemaining(e -> {
        if (!e.getValue().isTextual()) {
          throw new IllegalArgumentException(
              "--vend file " + file + ": config value of " + e.getKey() + " must be a string");
        }
        config.put(e.getKey(), e.getValue().asText());
      });
    }
    List<Credential> credentials = new ArrayList<>();
    JsonNode credentialsNode = root.path("storage-credentials");
    if (!credentialsNode.isMissingNode()) {
      if (!credentialsNode.isArray()) {
        throw new IllegalArgumentException(
            "--vend file " + file + ": \"storage-credentials\" must be an array");
      }
      for (JsonNode node : credentialsNode) {
        try {
          credentials.add(CredentialParser.fromJson(node)); // Iceberg's own checks: prefix, config
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException(
              "--vend file " + file + ": bad storage credential: " + e.getMessage(), e);
        }
      }
    }
    return new CredentialVending(always.asBoolean(false), config, credentials);
  }

  /**
   * Whether a loadTable/createTable/registerTable request gets credentials: "always" in the file,
   * or vended-credentials in the comma-separated X-Iceberg-Access-Delegation header (any case).
   */
  boolean requested(Headers headers) {
    if (always) {
      return true;
    }
    List<String> values = headers.get(DELEGATION_HEADER); // Headers: case-insensitive names
    if (values == null) {
      return false;
    }
    for (String value : values) {
      for (String mechanism : value.split(",")) {
        if (mechanism.trim().equalsIgnoreCase("vended-credentials")) {
          return true;
        }
      }
    }
    return false;
  }

  /** Placeholder values for one table, as used in the request. */
  static Map<String, String> vars(
      String location, String table, String rawNamespace, String rawPrefix) {
    return Map.of(
        "location", location == null ? "" : location,
        "table", table,
        "namespace", rawNamespace,
        "prefix", rawPrefix == null ? "" : rawPrefix);
  }

  Map<String, String> config(Map<String, String> vars) {
    Map<String, String> filled = new LinkedHashMap<>();
    config.forEach((k, v) -> filled.put(k, fill(v, vars)));
    return filled;
  }

  List<Credential> credentials(Map<String, String> vars) {
    List<Credential> filled = new ArrayList<>();
    for (Credential template : credentials) {
      ImmutableCredential.Builder credential =
          ImmutableCredential.builder().prefix(fill(template.prefix(), vars));
      template.config().forEach((k, v) -> credential.putConfig(k, fill(v, vars)));
      filled.add(credential.build());
    }
    return filled;
  }

  /** One pass, so that a filled-in value (a location, say) is never itself searched again. */
  private static String fill(String template, Map<String, String> vars) {
    if (vars.get("prefix").isEmpty()) {
      // "v1/{prefix}/namespaces/..." without a prefix must stay a valid path: "v1/namespaces/...".
      // Done on the template, so a "v1//" inside a filled-in location is left alone.
      template = template.replace("v1/{prefix}/", "v1/");
    }
    Matcher m = PLACEHOLDER.matcher(template);
    StringBuilder out = new StringBuilder();
    while (m.find()) {
      m.appendReplacement(out, Matcher.quoteReplacement(vars.get(m.group(1))));
    }
    m.appendTail(out);
    return out.toString();
  }
}
