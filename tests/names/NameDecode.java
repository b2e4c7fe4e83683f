// The Java side of the name-parsing differential (issue 8): reads raw path segments, one per
// line, and decodes each with Iceberg's own RESTUtil, as Gravitino, Polaris and Iceberg's
// servers do. Prints one JSON object per line:
//   {"namespace": [levels] | null, "name": "..." | null, "namespace_error": "...", "name_error": "..."}
// Strings are escaped as JSON unicode escapes outside printable ASCII so the Rust side reads them exactly.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.rest.RESTUtil;

public class NameDecode {
  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    StringBuilder out = new StringBuilder();
    String line;
    while ((line = in.readLine()) != null) {
      out.append('{');
      try {
        Namespace ns = RESTUtil.decodeNamespace(line);
        out.append("\"namespace\":[");
        String[] levels = ns.levels();
        for (int i = 0; i < levels.length; i++) {
          if (i > 0) out.append(',');
          quote(out, levels[i]);
        }
        out.append("],");
      } catch (RuntimeException e) {
        out.append("\"namespace\":null,\"namespace_error\":");
        quote(out, e.getClass().getSimpleName());
        out.append(',');
      }
      try {
        String name = RESTUtil.decodeString(line);
        out.append("\"name\":");
        quote(out, name);
      } catch (RuntimeException e) {
        out.append("\"name\":null,\"name_error\":");
        quote(out, e.getClass().getSimpleName());
      }
      out.append("}\n");
    }
    System.out.print(out);
    System.out.flush();
  }

  static void quote(StringBuilder out, String s) {
    out.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
        out.append(c);
      } else {
        out.append(String.format("\\u%04x", (int) c));
      }
    }
    out.append('"');
  }
}
