# Trino for the live tests and benches (sourced, not run; needs tests/e2e/lib.sh first).
# trino_install: Trino $TRINO_VERSION assembled from Maven Central's jars, as the server tarball
# lays it out (Trino publishes no tarball or plugin zip to Maven Central after 476):
#   - lib: trino-main and its runtime dependencies (server-pom.xml), resolved into ~/.m2 once;
#     TrinoMain.java stands in for trino-server-main's one class (not published);
#   - plugin/iceberg: symlinks to trino-iceberg and its compile and runtime dependencies
#     (iceberg-pom.xml) without the SPI the server provides, plus a jar holding
#     META-INF/services/io.trino.spi.Plugin (the plugin zip's build adds it; the jar lacks it).
# trino_launch ETC LOG PORT: starts one node, coordinator and worker, -Xmx1536M, 2 processors,
# with ETC/catalog/*.properties, in the background (TRINO_PID, added to PIDS); trino_wait LOG
# waits for "SERVER STARTED" (5 minutes at most) and sets TRINO_STARTUP (seconds since launch).
TRINO_VERSION=483
# Trino 480 and later need Java 25; the machines have Temurin 25 beside the system's Java 17.
TRINO_JAVA_HOME="${TRINO_JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
# The AWS SDK v2 for the dev catalog's S3FileIO (1.10.2, the dev catalog's Iceberg, is not served).
AWS_BUNDLE=org.apache.iceberg:iceberg-aws-bundle:1.10.1
TRINO_SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# m2_jar G:A:V: the jar's path in ~/.m2, fetched once.
m2_jar() {
  local g a v
  IFS=: read -r g a v <<<"$1"
  local jar="$HOME/.m2/repository/${g//.//}/$a/$v/$a-$v.jar"
  [ -s "$jar" ] || mvn -q -B dependency:get -Dtransitive=false -Dartifact="$1" >&2
  echo "$jar"
}

trino_install() { # trino_install ROOT: sets TRINO_HOME
  local root="$1"
  TRINO_HOME="$root/target/trino/$TRINO_VERSION"
  if [ ! -x "$TRINO_JAVA_HOME/bin/java" ]; then
    echo "trino: no Java 25 at $TRINO_JAVA_HOME (Trino $TRINO_VERSION needs Java 25; set TRINO_JAVA_HOME)" >&2
    return 1
  fi
  mkdir -p "$TRINO_HOME"
  local what
  for what in server iceberg; do
    if [ ! -s "$TRINO_HOME/$what.cp" ] || [ "$TRINO_SRC/$what-pom.xml" -nt "$TRINO_HOME/$what.cp" ]; then
      echo "trino: resolving $what-pom.xml (Trino $TRINO_VERSION) into ~/.m2" >&2
      mvn -q -B -f "$TRINO_SRC/$what-pom.xml" -Dtrino.version="$TRINO_VERSION" dependency:build-classpath \
        -DincludeScope=runtime -Dmdep.outputFile="$TRINO_HOME/$what.cp.tmp" >&2
      mv "$TRINO_HOME/$what.cp.tmp" "$TRINO_HOME/$what.cp"
      rm -rf "$TRINO_HOME/plugin"
    fi
  done
  if [ ! -d "$TRINO_HOME/plugin/iceberg" ]; then
    mkdir -p "$TRINO_HOME/plugin/iceberg.tmp" "$TRINO_HOME/services/META-INF/services"
    local jar
    tr ':' '\n' <"$TRINO_HOME/iceberg.cp" | while read -r jar; do
      case "$(basename "$jar")" in # the SPI and what it exports come from the server (parent-first)
        trino-spi-*|slice-*|jackson-annotations-*|opentelemetry-api-*|opentelemetry-context-*) continue ;;
      esac
      ln -sf "$jar" "$TRINO_HOME/plugin/iceberg.tmp/$(basename "$jar")"
    done
    echo io.trino.plugin.iceberg.IcebergPlugin >"$TRINO_HOME/services/META-INF/services/io.trino.spi.Plugin"
    "$TRINO_JAVA_HOME/bin/jar" cf "$TRINO_HOME/plugin/iceberg.tmp/icegate-iceberg-plugin-services.jar" \
      -C "$TRINO_HOME/services" META-INF
    mv "$TRINO_HOME/plugin/iceberg.tmp" "$TRINO_HOME/plugin/iceberg"
  fi
  if [ ! -f "$TRINO_HOME/classes/TrinoMain.class" ] || [ "$TRINO_SRC/TrinoMain.java" -nt "$TRINO_HOME/classes/TrinoMain.class" ]; then
    mkdir -p "$TRINO_HOME/classes"
    "$TRINO_JAVA_HOME/bin/javac" -nowarn -d "$TRINO_HOME/classes" -cp "$(cat "$TRINO_HOME/server.cp")" "$TRINO_SRC/TrinoMain.java"
  fi
}

trino_launch() { # trino_launch ETC LOG PORT
  local etc="$1" log="$2" port="$3"
  cat >"$etc/config.properties" <<EOF
coordinator=true
node-scheduler.include-coordinator=true
http-server.http.port=$port
discovery.uri=http://127.0.0.1:$port
node.internal-address=127.0.0.1
node.environment=live
node.id=live1
query.max-memory=512MB
query.max-memory-per-node=512MB
catalog.config-dir=$etc/catalog
plugin.dir=$TRINO_HOME/plugin
EOF
  printf 'io.trino=WARN\nio.trino.server.Server=INFO\n' >"$etc/log.properties"
  TRINO_T0=$SECONDS
  (cd "$etc" && exec "$TRINO_JAVA_HOME/bin/java" -Xmx1536M -XX:+UseG1GC -XX:+ExitOnOutOfMemoryError \
    -XX:ActiveProcessorCount=2 -Djdk.attach.allowAttachSelf=true -Dfile.encoding=UTF-8 \
    --add-modules=jdk.incubator.vector --add-opens=java.base/java.nio=ALL-UNNAMED --enable-native-access=ALL-UNNAMED \
    -Dconfig="$etc/config.properties" -Dlog.levels-file="$etc/log.properties" \
    -Dicegate.trino.version="$TRINO_VERSION" \
    -cp "$TRINO_HOME/classes:$(cat "$TRINO_HOME/server.cp")" TrinoMain) >"$log" 2>&1 &
  TRINO_PID=$!
  PIDS+=("$TRINO_PID")
}

trino_wait() { # trino_wait LOG: until the server says it started (5 minutes at most)
  wait_for "$1" "SERVER STARTED" "$TRINO_PID" 300 && TRINO_STARTUP=$((SECONDS - TRINO_T0))
}
