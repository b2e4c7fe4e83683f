// LocalFileIO: the catalog's FileIO over the local disk (java.io/java.nio), so that metadata
// files land in the file:// warehouse where real engines (PyIceberg, DuckDB, Spark) read them.
// The Iceberg jar has no local FileIO without Hadoop; locations keep the exact string the
// catalog chose (file:///abs/path, file:/abs/path or /abs/path).
package org.apache.iceberg.rest;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.util.Map;
import org.apache.iceberg.exceptions.NotFoundException;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.PositionOutputStream;
import org.apache.iceberg.io.SeekableInputStream;

public class LocalFileIO implements FileIO {
  private Map<String, String> properties = Map.of();

  /** The local file a location names; only file: and plain absolute paths are accepted. */
  static File toFile(String location) {
    String path = location;
    if (path.startsWith("file://")) {
      path = path.substring("file://".length());
      if (path.startsWith("localhost/")) {
        path = path.substring("localhost".length());
      }
    } else if (path.startsWith("file:")) {
      path = path.substring("file:".length());
    }
    if (!path.startsWith("/")) {
      throw new IllegalArgumentException("Not a local file location: " + location);
    }
    return new File(path);
  }

  @Override
  public void initialize(Map<String, String> props) {
    this.properties = Map.copyOf(props);
  }

  @Override
  public Map<String, String> properties() {
    return properties;
  }

  @Override
  public InputFile newInputFile(String location) {
    return new LocalInput(location);
  }

  @Override
  public OutputFile newOutputFile(String location) {
    return new LocalOutput(location);
  }

  @Override
  public void deleteFile(String location) {
    try {
      Files.deleteIfExists(toFile(location).toPath());
    } catch (IOException e) {
      throw new UncheckedIOException("Failed to delete " + location, e);
    }
  }

  private static final class LocalInput implements InputFile {
    private final String location;
    private final File file;

    LocalInput(String location) {
      this.location = location;
      this.file = toFile(location);
    }

    @Override
    public long getLength() {
      if (!file.exists()) {
        throw new NotFoundException("File does not exist: %s", location);
      }
      return file.length();
    }

    @Override
    public SeekableInputStream newStream() {
      if (!file.exists()) {
        throw new NotFoundException("File does not exist: %s", location);
      }
      return org.apache.iceberg.Files.localInput(file).newStream();
    }

    @Override
    public String location() {
      return location;
    }

    @Override
    public boolean exists() {
      return file.exists();
    }
  }

  private static final class LocalOutput implements OutputFile {
    private final String location;
    private final File file;

    LocalOutput(String location) {
      this.location = location;
      this.file = toFile(location);
    }

    @Override
    public PositionOutputStream create() {
      return org.apache.iceberg.Files.localOutput(file).create();
    }

    @Override
    public PositionOutputStream createOrOverwrite() {
      return org.apache.iceberg.Files.localOutput(file).createOrOverwrite();
    }

    @Override
    public String location() {
      return location;
    }

    @Override
    public InputFile toInputFile() {
      return new LocalInput(location);
    }
  }
}
