#!/usr/bin/env bash
# 031-postgres-mount: the PostgreSQL analytics backend (mount/postgres.c)
# against a real PostgreSQL server that this test starts itself: initdb +
# pg_ctl as an unprivileged user, data under $TMP, a unix socket in $TMP
# and a free TCP port on 127.0.0.1, stopped at exit.
#
# Proves: a released dataset mounts with the same rows and columns; the
# reader role (connecting over TCP with a password, as a BI tool would)
# can SELECT it and nothing else; RFC 4180 quoting round-trips; a ragged
# CSV, an oversized field and a connection killed mid-COPY leave nothing
# half-mounted; version 2 switches the view; unmount drops it all.
. "$(dirname "$0")/lib.sh"

PGMOUNT=${PGMOUNT:-$top_builddir/tests/mount/pgmount}
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -n "$PGBIN" ] && [ -x "$PGBIN/initdb" ] && [ -x "$PGBIN/pg_ctl" ] ||
	skip_all "no PostgreSQL server (/usr/lib/postgresql/*/bin/initdb); ./dev build installs the postgresql package"
command -v psql >/dev/null || skip_all "no psql client (postgresql-client)"
[ -x "$PGMOUNT" ] || skip_all "tests/mount/pgmount not built"

# PostgreSQL refuses to run as root: use its system user (or nobody).
if [ "$(id -u)" -eq 0 ]; then
	PG_OS_USER=postgres
	getent passwd postgres >/dev/null || PG_OS_USER=nobody
	as_pg() { runuser -u "$PG_OS_USER" -- "$@"; }
else
	PG_OS_USER=$(id -un)
	as_pg() { "$@"; }
fi

PGDIR=$TMP/pg
SOCK=$PGDIR/sock
PORT=$(free_port)
READER_PW=$(python3 -c 'import secrets; print(secrets.token_urlsafe(18))')
mkdir -p "$SOCK"
chmod 711 "$TMP"
chown -R "$PG_OS_USER" "$PGDIR"
chmod 700 "$SOCK"

stop_pg() {
	[ -f "$PGDIR/data/postmaster.pid" ] &&
		as_pg "$PGBIN/pg_ctl" -D "$PGDIR/data" -m immediate stop >/dev/null 2>&1
	rm -rf "$TMP"
}
trap stop_pg EXIT

if ! as_pg "$PGBIN/initdb" -D "$PGDIR/data" -U postgres -E UTF8 \
	--locale=C.UTF-8 --auth-local=trust --auth-host=scram-sha-256 \
	> "$PGDIR/initdb.log" 2>&1; then
	sed 's/^/# /' "$PGDIR/initdb.log" | tail -n 15
	skip_all "initdb failed as $PG_OS_USER (see log above)"
fi
if ! as_pg "$PGBIN/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/server.log" -w -t 60 \
	-o "-k $SOCK -h 127.0.0.1 -p $PORT -c fsync=off" start >/dev/null 2>&1; then
	sed 's/^/# /' "$PGDIR/server.log" | tail -n 15
	echo "Bail out! PostgreSQL did not start"
	exit 1
fi
diag "PostgreSQL $("$PGBIN/postgres" --version | awk '{print $3}') on 127.0.0.1:$PORT and $SOCK, as $PG_OS_USER"

# psql as the superuser over the socket; sql DB SQL prints the rows.
# (As arrays too: a background job runs psql itself, so its $! is psql's.)
SU_PSQL=(psql -X -q -At -v ON_ERROR_STOP=1 -h "$SOCK" -p "$PORT" -U postgres)
sql() {
	local db=$1; shift
	"${SU_PSQL[@]}" -d "$db" -c "$*" 2>&1
}
# The BI tool's view: the reader role over TCP with its password.
READER_PSQL=(psql -X -q -At -v ON_ERROR_STOP=1
	"host=127.0.0.1 port=$PORT dbname=analytics user=bi_reader")
reader_sql() {
	PGPASSWORD=$READER_PW "${READER_PSQL[@]}" -c "$*" 2>&1
}
ADMIN="host=$SOCK port=$PORT dbname=analytics user=custodian application_name=cdsgate-mount"
# pgm CMD ARGS...: the driver with the admin conninfo and the dataset's
# id (its schema cdsgate_<id>) for the name after -d
idof() { case $1 in patients) echo 1 ;; quoted) echo 2 ;; fresh) echo 3 ;; *) echo 9 ;; esac; }
pgm() {
	local a prev= id=9
	for a in "${@:2}"; do [ "$prev" = -d ] && id=$(idof "$a"); prev=$a; done
	"$PGMOUNT" "$1" -c "$ADMIN" -i "$id" "${@:2}"
}
mount_ds() { pgm mount -r bi_reader -d "$1" -v "$2" -f "$3"; }
version_of() { pgm version -d "$1" 2>/dev/null; }
# wait_backend APPNAME CONDITION: until a backend of APPNAME matches (10 s).
wait_backend() {
	local i
	for i in $(seq 100); do
		[ "$(sql analytics "SELECT count(*) FROM pg_stat_activity
		    WHERE application_name = '$1' AND $2")" = 1 ] && return 0
		sleep 0.1
	done
	return 1
}
# every relation in the database's non-system schemas, for before/after
catalog() {
	sql analytics "SELECT n.nspname || '.' || c.relname || ':' || c.relkind
	    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
	    WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')
	      AND n.nspname NOT LIKE 'pg_toast%' ORDER BY 1;
	    SELECT nspname FROM pg_namespace ORDER BY 1"
}

# The custodian (admin role, owns the database, not a superuser), its
# private raw table, and the BI tool's login role.
sql postgres "CREATE ROLE custodian LOGIN; CREATE ROLE bi_reader LOGIN PASSWORD '$READER_PW';
	CREATE ROLE bi_other LOGIN; CREATE ROLE bi_power LOGIN CREATEROLE;
	CREATE ROLE bi_readall LOGIN; GRANT pg_read_all_data TO bi_readall" >/dev/null
sql postgres "CREATE DATABASE analytics OWNER custodian" >/dev/null
psql -X -q -v ON_ERROR_STOP=1 -h "$SOCK" -p "$PORT" -U custodian -d analytics -c \
	"CREATE SCHEMA private; CREATE TABLE private.raw_patients (name text);
	 INSERT INTO private.raw_patients VALUES ('Olivia Wright')" >/dev/null 2>&1 ||
	not_ok "custodian creates its private table"

# A released dataset: the sample, through the de-identification gate.
"$CDSGATE" sample generate --out "$TMP/s" --records 2000 --seed 3 >/dev/null
"$CDSGATE" deid anonymize --data "$TMP/s/patients.csv" --hierarchies "$TMP/s" \
	--qi age,sex,zip,race,admission_date --identifying patient_id,name \
	--sensitive diagnosis --insensitive length_of_stay \
	--pu-threshold 0.01 --population 4.031e6 --k 5 \
	--output "$TMP/released.csv" --report "$TMP/report.json" >/dev/null 2>&1
csv_rows() { python3 -c 'import csv,sys; print(sum(1 for _ in csv.reader(open(sys.argv[1], newline="")))-1)' "$1"; }
csv_header() { python3 -c 'import csv,sys; print(",".join(next(csv.reader(open(sys.argv[1], newline="")))))' "$1"; }
N1=$(csv_rows "$TMP/released.csv")
diag "released dataset: $N1 rows, columns $(csv_header "$TMP/released.csv")"

# ---- mount version 1 ----
t0=$(date +%s.%N)
check "mount patients v1 (released CSV, $N1 rows)" quiet mount_ds patients 1 "$TMP/released.csv"
diag "mount of $N1 rows: $(python3 -c "import time; print('%.3f' % (time.time() - $t0))") s"
check "mounted version is 1 with $N1 rows" \
	test "$(version_of patients)" = "version 1 rows $N1"
cols=$(sql analytics "SELECT string_agg(column_name::text, ',' ORDER BY ordinal_position)
	FROM information_schema.columns WHERE table_schema = 'cdsgate_1' AND table_name = 'patients'")
check "view columns equal the CSV header ($cols)" test "$cols" = "$(csv_header "$TMP/released.csv")"
check "table patients_v1 holds $N1 rows" \
	test "$(sql analytics 'SELECT count(*) FROM cdsgate_1.patients_v1')" = "$N1"
same=$(python3 - "$TMP/released.csv" <<'EOF'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))[1:]
print(sum(1 for r in rows if r[0] == "60-79"))
EOF
)
check "values survive: $same rows with age 60-79 in both" \
	test "$(sql analytics "SELECT count(*) FROM cdsgate_1.patients WHERE age = '60-79'")" = "$same"

# ---- what the reader role (the BI tool) may and may not do ----
check "reader SELECTs the view over TCP with its password ($N1 rows)" \
	test "$(reader_sql 'SELECT count(*) FROM cdsgate_1.patients')" = "$N1"
diag "a BI tool connects as: postgresql://bi_reader:***@127.0.0.1:$PORT/analytics, schema cdsgate_1, table patients"
check "reader can group and count (what a dashboard does)" \
	test "$(reader_sql 'SELECT count(DISTINCT sex) FROM cdsgate_1.patients')" -ge 2
out=$(PGPASSWORD=wrong psql -X -At "host=127.0.0.1 port=$PORT dbname=analytics user=bi_reader" -c 'SELECT 1' 2>&1)
check "a wrong password is refused" grep -q 'password authentication failed' <<<"$out"
denied() { grep -q 'permission denied' <<<"$1"; }
check "reader cannot INSERT" denied "$(reader_sql "INSERT INTO cdsgate_1.patients_v1 (age) VALUES ('1')")"
check "reader cannot UPDATE" denied "$(reader_sql "UPDATE cdsgate_1.patients_v1 SET age = 'x'")"
check "reader cannot DELETE" denied "$(reader_sql "DELETE FROM cdsgate_1.patients_v1")"
check "reader cannot TRUNCATE" denied "$(reader_sql "TRUNCATE cdsgate_1.patients_v1")"
check "reader cannot CREATE TABLE in the dataset's schema" \
	denied "$(reader_sql 'CREATE TABLE cdsgate_1.mine (x int)')"
check "reader cannot CREATE SCHEMA" denied "$(reader_sql 'CREATE SCHEMA mine')"
check "reader cannot CREATE TABLE in public" denied "$(reader_sql 'CREATE TABLE public.mine (x int)')"
check "reader cannot read the custodian's private table" \
	denied "$(reader_sql 'SELECT * FROM private.raw_patients')"
check "reader cannot DROP the view" \
	grep -q 'must be owner' <<<"$(reader_sql 'DROP VIEW cdsgate_1.patients')"

# ---- RFC 4180 quoting round-trips ----
printf 'id,text,quote,empty\r\n1,"a,b","say ""hi""",""\r\n2,"line1\nline2",plain,\r\n' > "$TMP/quoted.csv"
# and values COPY could misread if they were not re-quoted
printf '3,\\.,NULL,"\\N"\r\n4," lead, trail ","tab\there","cr\r\nlf"\r\n5,é ü 中文,back\\slash,"""\r\n"""\r\n' >> "$TMP/quoted.csv"
check "mount a CSV with quoted comma, newline and quotes" quiet mount_ds quoted 1 "$TMP/quoted.csv"
check "quoted comma, quotes and empty string round-trip" test "$(sql analytics \
	"SELECT count(*) FROM cdsgate_2.quoted WHERE id = '1' AND text = 'a,b'
	 AND quote = 'say \"hi\"' AND empty = ''")" = 1
check "quoted newline round-trips" test "$(sql analytics \
	"SELECT count(*) FROM cdsgate_2.quoted WHERE id = '2'
	 AND text = E'line1\\nline2' AND quote = 'plain' AND empty = ''")" = 1
check "no NULLs: every value is the file's string" \
	test "$(sql analytics 'SELECT count(*) FROM cdsgate_2.quoted WHERE empty IS NULL')" = 0
# same_rows CSV SQL-RELATION: the relation's rows, exported by the server
# as CSV, equal the file's data rows (as a multiset of lists of strings).
same_rows() {
	sql analytics "COPY (SELECT * FROM $2) TO STDOUT WITH (FORMAT csv)" > "$TMP/export.csv"
	python3 - "$1" "$TMP/export.csv" <<'EOF'
import csv, sys
a = sorted(list(csv.reader(open(sys.argv[1], newline="", encoding="utf-8")))[1:])
b = sorted(csv.reader(open(sys.argv[2], newline="", encoding="utf-8")))
sys.exit(0 if a == b and len(a) > 0 else 1)
EOF
}
check "every value of the hostile CSV round-trips (\\., NULL, \\N, CRLF, UTF-8, spaces)" \
	same_rows "$TMP/quoted.csv" cdsgate_2.quoted
check "every value of the released CSV round-trips" \
	same_rows "$TMP/released.csv" cdsgate_1.patients

# ---- failures leave nothing half-mounted ----
before=$(catalog)
# the ragged row comes after more than one 64 KiB chunk went to the server
{ cat "$TMP/released.csv"; echo '60-79,F,*,White'; tail -n 5 "$TMP/released.csv"; } > "$TMP/ragged.csv"
out=$(mount_ds patients 2 "$TMP/ragged.csv" 2>&1); rc=$?
check "a ragged row fails the mount with its line ($out)" \
	eval '[ $rc -eq 1 ] && grep -q "ragged.csv:$((N1 + 2)): ragged row" <<<"$out"'
out=$(mount_ds fresh 1 "$TMP/ragged.csv" 2>&1)
check "a ragged CSV for a new dataset creates no schema" test "$(catalog)" = "$before"
python3 -c 'import sys; print("age,sex"); print("1,2"); print("x," + "y" * 70000)' > "$TMP/huge.csv"
out=$(mount_ds patients 2 "$TMP/huge.csv" 2>&1); rc=$?
check "a field over the 64 KiB bound fails the mount ($out)" test $rc -eq 1
printf 'age,zip\n1,2\n' > "$TMP/header.csv"
out=$(pgm mount -r bi_reader -d patients -v 2 -f "$TMP/header.csv" -C age,sex 2>&1); rc=$?
check "a header that differs from the column list fails ($out)" \
	eval '[ $rc -eq 1 ] && grep -q "header column 2" <<<"$out"'
out=$(mount_ds Bad-Name 1 "$TMP/released.csv" 2>&1); rc=$?
check "a bad dataset name is refused ($out)" eval '[ $rc -eq 1 ] && grep -q "a-z0-9_" <<<"$out"'
out=$(pgm mount -r postgres -d patients -v 2 -f "$TMP/released.csv" 2>&1); rc=$?
check "a superuser reader role is refused ($out)" eval '[ $rc -eq 1 ] && grep -q "too powerful" <<<"$out"'
for role in custodian bi_power bi_readall; do
	out=$(pgm mount -r $role -d patients -v 2 -f "$TMP/released.csv" 2>&1); rc=$?
	check "reader role $role (admin / CREATEROLE / pg_read_all_data) is refused" \
		eval '[ $rc -eq 1 ] && grep -q "too powerful" <<<"$out"'
done
out=$(pgm mount -r nobody_here -d patients -v 2 -f "$TMP/released.csv" 2>&1); rc=$?
check "a missing reader role is refused ($out)" eval '[ $rc -eq 1 ] && grep -q "does not exist" <<<"$out"'
out=$(mount_ds patients 1 "$TMP/released.csv" 2>&1); rc=$?
check "remounting an existing version is refused (exit 3)" test $rc -eq 3
out=$(pgm mount -r bi_other -d patients -v 2 -f "$TMP/released.csv" 2>&1); rc=$?
check "a mount for another reader role is refused ($out)" \
	eval '[ $rc -eq 1 ] && grep -q "unmount it first" <<<"$out"'
check "after all those failures nothing changed" test "$(catalog)" = "$before"
check "after all those failures version 1 is still served" \
	test "$(version_of patients)" = "version 1 rows $N1"

# ---- a BI query holding the view: the mount waits a bounded time ----
# A big version 2: 200,000 raw sample rows (de-identification is not what
# this test is about).  It is copied in full, then the view can't be
# swapped, and all of it is rolled back.
"$CDSGATE" sample generate --out "$TMP/big" --records 200000 --seed 4 >/dev/null
N2=200000
PGAPPNAME=bi-hold PGPASSWORD=$READER_PW "${READER_PSQL[@]}" \
	-c 'SELECT count(*) FROM cdsgate_1.patients; SELECT pg_sleep(60)' >/dev/null 2>&1 &
HOLD=$!
wait_backend bi-hold "wait_event = 'PgSleep'"
out=$(pgm mount -r bi_reader -d patients -v 2 -f "$TMP/big/patients.csv" -t 500 2>&1); rc=$?
check "a BI query holding the view makes the mount fail after 0.5 s ($out)" \
	eval '[ $rc -eq 1 ] && grep -q "lock timeout" <<<"$out"'
sql analytics "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'bi-hold'" >/dev/null
wait "$HOLD" 2>/dev/null
check "after the lock timeout nothing changed" test "$(catalog)" = "$before"
check "after the lock timeout version 1 is still served" \
	test "$(version_of patients)" = "version 1 rows $N1"

# ---- a connection killed in the middle of COPY ----
# The killer runs inside the server: it polls pg_stat_activity every
# 10 ms and terminates the mount's backend the moment it is in COPY.
PGAPPNAME=cdsgate-killer "${SU_PSQL[@]}" -d analytics -c "DO \$\$ DECLARE n int := 0; BEGIN
	FOR i IN 1..3000 LOOP
		PERFORM pg_stat_clear_snapshot();
		SELECT count(*) INTO n FROM (SELECT pg_terminate_backend(pid)
		  FROM pg_stat_activity WHERE application_name = 'cdsgate-kill'
		  AND state = 'active' AND query LIKE 'COPY%') k;
		EXIT WHEN n > 0;
		PERFORM pg_sleep(0.01);
	END LOOP;
	RAISE NOTICE 'killed %', n;
END \$\$" > "$TMP/killer.out" 2>&1 &
KILLER=$!
wait_backend cdsgate-killer "state = 'active'"
out=$("$PGMOUNT" mount -c "${ADMIN/cdsgate-mount/cdsgate-kill}" -r bi_reader \
	-i 1 -d patients -v 2 -f "$TMP/big/patients.csv" 2>&1); rc=$?
wait "$KILLER"
check "the killer terminated the mount's backend during COPY" grep -q 'killed 1' "$TMP/killer.out"
check "the killed mount fails ($out)" test $rc -eq 1
check "after the kill nothing changed in the catalog" test "$(catalog)" = "$before"
check "after the kill version 1 is still served" \
	test "$(version_of patients)" = "version 1 rows $N1"
check "after the kill the reader still sees $N1 rows" \
	test "$(reader_sql 'SELECT count(*) FROM cdsgate_1.patients')" = "$N1"

# ---- version 2 switches the view ----
t0=$(date +%s.%N)
check "mount patients v2 ($N2 rows, other columns)" quiet mount_ds patients 2 "$TMP/big/patients.csv"
diag "mount of $N2 rows ($(du -k "$TMP/big/patients.csv" | cut -f1) KiB): $(python3 -c "import time; print('%.2f' % (time.time() - $t0))") s"
check "mounted version is 2 with $N2 rows" test "$(version_of patients)" = "version 2 rows $N2"
check "the reader sees version 2 through the view" \
	test "$(reader_sql 'SELECT count(*) FROM cdsgate_1.patients')" = "$N2"
check "the view has version 2's columns" test "$(reader_sql \
	"SELECT string_agg(column_name::text, ',' ORDER BY ordinal_position) FROM information_schema.columns
	 WHERE table_schema = 'cdsgate_1' AND table_name = 'patients'")" = "$(csv_header "$TMP/big/patients.csv")"
check "version 1's table is kept for the custodian" \
	test "$(sql analytics 'SELECT count(*) FROM cdsgate_1.patients_v1')" = "$N1"
check "but the reader has lost version 1" \
	denied "$(reader_sql 'SELECT count(*) FROM cdsgate_1.patients_v1')"
check "no grant on version 1 remains for the reader or PUBLIC" test "$(sql analytics \
	"SELECT count(*) FROM information_schema.role_table_grants WHERE grantee IN ('bi_reader', 'PUBLIC') AND table_name = 'patients_v1'")" = 0
check "reader still cannot write version 2" \
	denied "$(reader_sql "DELETE FROM cdsgate_1.patients_v2")"

# ---- unmount ----
check "unmount patients" quiet pgm unmount -d patients
check "the schema is gone" test "$(sql analytics "SELECT to_regnamespace('cdsgate_1') IS NULL")" = t
pgm version -d patients >/dev/null 2>&1; rc=$?
check "version of an unmounted dataset says not mounted (exit 3)" test $rc -eq 3
pgm unmount -d patients >/dev/null 2>&1; rc=$?
check "unmounting again says not mounted (exit 3)" test $rc -eq 3
check "the reader can no longer read it" grep -q 'does not exist' <<<"$(reader_sql 'SELECT count(*) FROM cdsgate_1.patients')"
check "unmount left the other dataset alone" \
	test "$(reader_sql 'SELECT count(*) FROM cdsgate_2.quoted')" = 5
check "the custodian's private table is untouched" \
	test "$(sql analytics 'SELECT count(*) FROM private.raw_patients')" = 1
out=$("$PGMOUNT" version -c "host=$SOCK port=1 dbname=analytics user=custodian" -i 1 -d patients 2>&1); rc=$?
check "a server that is not there is a clear error ($out)" \
	eval '[ $rc -eq 1 ] && grep -q "cannot connect" <<<"$out"'

done_testing
