#!/bin/sh
# The entrypoint of the test-only PostgreSQL image (scripts/image.sh postgres), in the image's
# one shell, dash, with no other tool: initdb on the first start, then the server, TLS only.
# Its environment (tests/pod/gateway/postgres.yaml sets it):
#   PGDATA                  the cluster's directory (on the pod's volume)
#   POSTGRES_USER           the role icegate logs in as; its password is in POSTGRES_PASSWORD_FILE
#   POSTGRES_DATABASES      the databases that role owns (space-separated)
#   POSTGRES_TLS_DIR        tls.crt and tls.key, the server's certificate and key (a Secret)
set -eu
umask 077
bin=/usr/lib/postgresql/15/bin
# The first line of a file, as dash reads it (no `cat` in the image).
first_line() { IFS= read -r line <"$1" || [ -n "$line" ]; printf '%s' "$line"; }

if [ ! -s "$PGDATA/PG_VERSION" ]; then
  # No password for the superuser: pg_hba.conf below lets it in from nowhere. Not synced to
  # disk until the server's first checkpoint (a test's store: this saves seconds per run); a
  # crash before then leaves a PGDATA to delete. initdb asks `locale -a`, which the image lacks
  # ("locale: not found"): with --no-locale it needs no locale.
  "$bin/initdb" -D "$PGDATA" -U postgres --no-locale -E UTF8 --auth=reject --no-sync >/dev/null
  password="$(first_line "$POSTGRES_PASSWORD_FILE")"
  case "$password" in *"'"*) echo "the password may not hold a quote" >&2; exit 1 ;; esac
  sql="CREATE ROLE $POSTGRES_USER LOGIN PASSWORD '$password';"
  for db in $POSTGRES_DATABASES; do sql="$sql
CREATE DATABASE $db OWNER $POSTGRES_USER;"
  done
  # Single-user mode reads one statement a line; nothing listens meanwhile.
  printf '%s\n' "$sql" | "$bin/postgres" --single -D "$PGDATA" -c jit=off -c fsync=off postgres >/dev/null
  # TLS with a password, from any address, for that role only.
  printf 'hostssl all %s all scram-sha-256\n' "$POSTGRES_USER" >"$PGDATA/pg_hba.conf"
  echo "initialized $PGDATA: role $POSTGRES_USER, databases $POSTGRES_DATABASES" >&2
fi

# The server refuses a key others may read; a Secret's files are 0644, so it gets a 0600 copy.
while IFS= read -r line || [ -n "$line" ]; do printf '%s\n' "$line"; done \
  <"$POSTGRES_TLS_DIR/tls.key" >"$PGDATA/server.key"

exec "$bin/postgres" -D "$PGDATA" \
  -c listen_addresses='*' -c unix_socket_directories= \
  -c ssl=on -c ssl_cert_file="$POSTGRES_TLS_DIR/tls.crt" -c ssl_key_file="$PGDATA/server.key" \
  -c password_encryption=scram-sha-256 -c jit=off -c log_connections=on
