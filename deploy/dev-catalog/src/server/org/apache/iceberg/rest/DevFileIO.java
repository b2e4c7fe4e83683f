// DevFileIO: the catalog's FileIO when --s3-endpoint is given: s3:// and s3a:// locations go to
// Iceberg's S3FileIO at that endpoint (path-style, e.g. a local moto), every other location to
// LocalFileIO. S3FileIO needs the AWS SDK v2 on the class path (run.sh: DEV_CATALOG_CLASSPATH,
// e.g. Maven Central's org.apache.iceberg:iceberg-aws-bundle); without --s3-endpoint it is
// never loaded.
package org.apache.iceberg.rest;

import java.util.HashMap;
import java.util.Map;
import org.apache.iceberg.aws.s3.S3FileIO;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;

public class DevFileIO implements FileIO {
  private final LocalFileIO local = new LocalFileIO();
  private final S3FileIO s3 = new S3FileIO();
  private Map<String, String> properties = Map.of();

  /** The S3FileIO properties for ENDPOINT: path-style, the region and keys from the env. */
  static Map<String, String> s3Properties(String endpoint) {
    Map<String, String> props = new HashMap<>();
    props.put("s3.endpoint", endpoint);
    props.put("s3.path-style-access", "true");
    props.put("client.region", envOr("AWS_REGION", "us-east-1"));
    props.put("s3.access-key-id", envOr("AWS_ACCESS_KEY_ID", "testing"));
    props.put("s3.secret-access-key", envOr("AWS_SECRET_ACCESS_KEY", "testing"));
    return props;
  }

  private static String envOr(String name, String fallback) {
    String value = System.getenv(name);
    return value == null || value.isEmpty() ? fallback : value;
  }

  private FileIO route(String location) {
    return location.startsWith("s3://") || location.startsWith("s3a://") ? s3 : local;
  }

  @Override
  public void initialize(Map<String, String> props) {
    this.properties = Map.copyOf(props);
    local.initialize(props);
    s3.initialize(props);
  }

  @Override
  public Map<String, String> properties() {
    return properties;
  }

  @Override
  public InputFile newInputFile(String location) {
    return route(location).newInputFile(location);
  }

  @Override
  public OutputFile newOutputFile(String location) {
    return route(location).newOutputFile(location);
  }

  @Override
  public void deleteFile(String location) {
    route(location).deleteFile(location);
  }

  @Override
  public void close() {
    s3.close();
  }
}
