// Relocate: a tiny bytecode relocator (a stand-in for maven-shade's relocation).
// It copies the classes and resources of the input jars into one output jar, renaming every
// package that starts with a FROM prefix to TO (class references via ASM's ClassRemapper, string
// constants that name such a class, resource paths and META-INF/services files).
//
// Usage: java -cp asm.jar:asm-commons.jar:. Relocate OUT.jar FROM=TO [FROM=TO...] -- IN.jar...
// Prefixes use slashes, e.g. com/fasterxml/jackson/=org/apache/iceberg/shaded/com/fasterxml/jackson/

import java.io.ByteArrayOutputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.commons.ClassRemapper;
import org.objectweb.asm.commons.Remapper;

public class Relocate {
  private final Map<String, String> rules = new LinkedHashMap<>();

  /** Internal name (a/b/C) or resource path, relocated when it starts with a FROM prefix. */
  String mapPath(String name) {
    for (Map.Entry<String, String> r : rules.entrySet()) {
      if (name.startsWith(r.getKey())) {
        return r.getValue() + name.substring(r.getKey().length());
      }
    }
    return name;
  }

  /** Dotted class name (a.b.C), relocated the same way. */
  String mapDotted(String name) {
    return mapPath(name.replace('.', '/')).replace('/', '.');
  }

  private final Remapper remapper =
      new Remapper() {
        @Override
        public String map(String internalName) {
          return mapPath(internalName);
        }

        @Override
        public Object mapValue(Object value) {
          if (value instanceof String) {
            String s = (String) value;
            String slashed = mapPath(s);
            if (!slashed.equals(s)) {
              return slashed;
            }
            String dotted = mapDotted(s);
            if (!dotted.equals(s) && s.indexOf('/') < 0) {
              return dotted;
            }
            return s;
          }
          return super.mapValue(value);
        }
      };

  byte[] relocateClass(byte[] bytes) {
    ClassReader reader = new ClassReader(bytes);
    ClassWriter writer = new ClassWriter(0);
    reader.accept(new ClassRemapper(writer, remapper), 0);
    return writer.toByteArray();
  }

  String relocateServicesFile(String text) {
    StringBuilder out = new StringBuilder();
    for (String line : text.split("\n", -1)) {
      String t = line.trim();
      out.append(t.isEmpty() || t.startsWith("#") ? line : mapDotted(t));
      out.append('\n');
    }
    return out.toString().replaceAll("\n+$", "\n");
  }

  public static void main(String[] args) throws IOException {
    Relocate relocate = new Relocate();
    String out = args[0];
    List<String> inputs = new ArrayList<>();
    boolean inInputs = false;
    for (int i = 1; i < args.length; i++) {
      if (args[i].equals("--")) {
        inInputs = true;
      } else if (inInputs) {
        inputs.add(args[i]);
      } else {
        String[] kv = args[i].split("=", 2);
        relocate.rules.put(kv[0], kv[1]);
      }
    }

    Set<String> written = new HashSet<>();
    int classes = 0;
    Manifest manifest = new Manifest();
    manifest.getMainAttributes().putValue("Manifest-Version", "1.0");
    manifest.getMainAttributes().putValue("Created-By", "icegate dev-catalog Relocate");
    try (JarOutputStream jar = new JarOutputStream(new FileOutputStream(out), manifest)) {
      written.add("META-INF/MANIFEST.MF");
      for (String input : inputs) {
        try (JarFile in = new JarFile(input)) {
          Enumeration<JarEntry> entries = in.entries();
          while (entries.hasMoreElements()) {
            JarEntry e = entries.nextElement();
            String name = e.getName();
            if (e.isDirectory()
                || name.equals("META-INF/MANIFEST.MF")
                || name.endsWith("module-info.class")
                || name.matches("META-INF/[^/]+\\.(SF|RSA|DSA|EC)")) {
              continue;
            }
            byte[] data;
            try (InputStream is = in.getInputStream(e)) {
              data = is.readAllBytes();
            }
            String target;
            if (name.endsWith(".class")) {
              target = relocate.mapPath(name);
              data = relocate.relocateClass(data);
              classes++;
            } else if (name.startsWith("META-INF/services/")) {
              target = "META-INF/services/" + relocate.mapDotted(name.substring(18));
              data =
                  relocate
                      .relocateServicesFile(new String(data, StandardCharsets.UTF_8))
                      .getBytes(StandardCharsets.UTF_8);
            } else {
              target = relocate.mapPath(name);
            }
            if (written.add(target)) {
              jar.putNextEntry(new JarEntry(target));
              jar.write(data);
              jar.closeEntry();
            }
          }
        }
      }
    }
    System.out.println("relocated " + classes + " classes from " + inputs.size() + " jars into " + out);
  }
}
