# tests/regress/lib-pg.sh — a throwaway PostgreSQL server for the mount
# scenarios (the set-up of 031): initdb + pg_ctl as the postgres system
# user, data under $TMP/pg, a unix socket there and a free TCP port on
# 127.0.0.1.  Source after lib.sh.
#
#   pg_start     skip_all without a server; 0 once it accepts connections
#   pg_stop      stop it (immediate)
#   sql DB SQL   psql as the superuser over the socket; prints the rows
#   reader_sql   the BI tool's view: bi_reader over TCP with its password
#   pg_analytics the roles custodian (admin, CREATEROLE) and bi_reader, the database
#                analytics owned by custodian; $PG_ADMIN is its conninfo

PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
PGDIR=$TMP/pg
PGSOCK=$PGDIR/sock

pg_start() {
	[ -n "$PGBIN" ] && [ -x "$PGBIN/initdb" ] && [ -x "$PGBIN/pg_ctl" ] ||
		skip_all "no PostgreSQL server (/usr/lib/postgresql/*/bin/initdb); ./dev build installs the postgresql package"
	command -v psql >/dev/null || skip_all "no psql client (postgresql-client)"
	PG_OS_USER=postgres
	getent passwd postgres >/dev/null || PG_OS_USER=nobody
	PGPORT=$(free_port)
	READER_PW=$(python3 -c 'import secrets; print(secrets.token_urlsafe(18))')
	mkdir -p "$PGSOCK"
	chmod 711 "$TMP"
	chown -R "$PG_OS_USER" "$PGDIR"
	# the api's mounter (cdsgate-api) connects over this socket
	chmod 755 "$PGDIR" "$PGSOCK"
	if ! runuser -u "$PG_OS_USER" -- "$PGBIN/initdb" -D "$PGDIR/data" -U postgres -E UTF8 \
		--locale=C.UTF-8 --auth-local=trust --auth-host=scram-sha-256 \
		> "$PGDIR/initdb.log" 2>&1; then
		sed 's/^/# /' "$PGDIR/initdb.log" | tail -n 15
		skip_all "initdb failed as $PG_OS_USER (see log above)"
	fi
	if ! runuser -u "$PG_OS_USER" -- "$PGBIN/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/server.log" -w -t 60 \
		-o "-k $PGSOCK -h 127.0.0.1 -p $PGPORT -c fsync=off" start >/dev/null 2>&1; then
		sed 's/^/# /' "$PGDIR/server.log" | tail -n 15
		skip_all "PostgreSQL did not start (see its log above)"
	fi
	diag "PostgreSQL $("$PGBIN/postgres" --version | awk '{print $3}') on 127.0.0.1:$PGPORT and $PGSOCK"
}

pg_stop() {
	[ -f "$PGDIR/data/postmaster.pid" ] &&
		runuser -u "$PG_OS_USER" -- "$PGBIN/pg_ctl" -D "$PGDIR/data" -m immediate stop >/dev/null 2>&1
	return 0
}

sql() {
	local db=$1; shift
	psql -X -q -At -v ON_ERROR_STOP=1 -h "$PGSOCK" -p "$PGPORT" -U postgres \
		-d "$db" -c "$*" 2>&1
}

reader_sql() {
	PGPASSWORD=$READER_PW psql -X -q -At -v ON_ERROR_STOP=1 \
		"host=127.0.0.1 port=$PGPORT dbname=analytics user=bi_reader" -c "$*" 2>&1
}

pg_analytics() {
	# CREATEROLE: the sessions' own reader roles (pg_session_role_create)
	sql postgres "CREATE ROLE custodian LOGIN CREATEROLE; CREATE ROLE bi_reader LOGIN PASSWORD '$READER_PW'" >/dev/null &&
	sql postgres "CREATE DATABASE analytics OWNER custodian" >/dev/null &&
	sql analytics "REVOKE ALL ON DATABASE analytics FROM PUBLIC;
		GRANT CONNECT ON DATABASE analytics TO custodian, bi_reader" >/dev/null || return 1
	PG_ADMIN="host=$PGSOCK port=$PGPORT dbname=analytics user=custodian application_name=cdsgate-api"
}
