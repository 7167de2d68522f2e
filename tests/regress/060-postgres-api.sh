#!/usr/bin/env bash
# 060-postgres-api: the PostgreSQL backend through the API and the CLI
#.  `cdsgated serve` with pg_conninfo / pg_reader_role forks
# the api's PostgreSQL mounter; `POST /v1/datasets/{id}/mount` with
# {"backend": "postgres"} (or the config's mount_backend) mounts a
# dataset that passed the gate into a real server started here (031's
# set-up); the reader role can SELECT it, cannot write, and cannot reach
# the raw file; a failed dataset is refused (409, the store's trigger)
# and never reaches the database; unmount drops the schema; every step is
# audited with its backend; a server that is down gives 502 and leaves
# the store as it was.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-serve.sh"
. "$(dirname "$0")/lib-pg.sh"

serve_prereqs
serve_dirs
pg_start
trap 'kill $SRV_PID 2>/dev/null; pg_stop; sleep 1; rm -rf "$TMP"' EXIT
check "the analytics database, its admin and reader roles" pg_analytics

# ---- the config ----
serve_config '"pg_conninfo": "x"'
"$CDSGATED" serve -n --config "$CONF" > "$D/n.out" 2>&1; rc=$?
check "pg_conninfo without pg_reader_role is refused (exit $rc)" \
	sh -c "[ $rc -eq 2 ] && grep -q 'go together' '$D/n.out'"
serve_config '"mount_backend": "mysql"'
"$CDSGATED" serve -n --config "$CONF" > "$D/n.out" 2>&1; rc=$?
check "an unknown mount_backend is refused (exit $rc)" \
	sh -c "[ $rc -eq 2 ] && grep -q 'mount_backend' '$D/n.out'"
serve_config '"mount_backend": "postgres"'
"$CDSGATED" serve -n --config "$CONF" > "$D/n.out" 2>&1; rc=$?
check "mount_backend postgres without pg_conninfo is refused (exit $rc)" test "$rc" -eq 2
serve_config "\"mount_backend\": \"postgres\", \"pg_conninfo\": \"$PG_ADMIN\", \"pg_reader_role\": \"bi_reader\""
"$CDSGATED" serve -T --config "$CONF" > "$D/T.out" 2>&1
check "serve -T shows the PostgreSQL keys" python3 - "$D/T.out" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
assert c["mount_backend"] == "postgres" and c["pg_reader_role"] == "bi_reader", c
PY
check "cdsgated serve starts with the PostgreSQL backend" serve_start
check "the api's mounter says it started" grep -q 'postgres mounter: reader role bi_reader' "$D/err"

# ---- a dataset that passed: mounted (the config's default backend) ----
import_passed patients
check "a dataset passes the gate (k=5)" test "$(json "$D/imp.json" 'j["state"]')" = passed
RELEASED=$D/state/released/$DS/data.csv
ROWS=$(python3 -c 'import csv,sys; print(sum(1 for _ in csv.reader(open(sys.argv[1], newline="")))-1)' "$RELEASED")
t0=$(date +%s%N)
"$CDSGATE" dataset mount "$DS" --json > "$D/m.json" 2> "$D/m.err"; rc=$?
MS=$(( ($(date +%s%N) - t0) / 1000000 ))
diag "mount of $ROWS rows into PostgreSQL through the API: $MS ms"
check "cdsgate dataset mount (no --backend: the config's postgres) (exit $rc: $(head -c 200 "$D/m.err"))" \
	sh -c "[ $rc -eq 0 ] && [ \"\$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j[\"state\"], j[\"mount_backend\"])' '$D/m.json')\" = 'mounted postgres' ]"
check "the store says mounted in postgres" \
	test "$(sqlite3 "$D/state/store.db" "select state || ' ' || mount_backend from datasets where id=$DS")" = "mounted postgres"
check "the embedded mount dir stayed empty" test -z "$(ls -A "$D/mnt")"
check "the reader role SELECTs the view: $ROWS rows" \
	test "$(reader_sql "SELECT count(*) FROM cdsgate_$DS.patients")" = "$ROWS"
check "with the released columns, not the identifying ones" \
	sh -c "cols=\$(PGPASSWORD='$READER_PW' psql -X -At 'host=127.0.0.1 port=$PGPORT dbname=analytics user=bi_reader' -c \"SELECT string_agg(column_name, ',') FROM information_schema.columns WHERE table_schema='cdsgate_$DS' AND table_name='patients'\"); echo \"# columns: \$cols\"; echo \"\$cols\" | grep -q age && ! echo \"\$cols\" | grep -qE 'patient_id|(^|,)name(,|$)'"
out=$(reader_sql "INSERT INTO cdsgate_$DS.patients (age) VALUES ('1')")
check "the reader cannot INSERT ($out)" sh -c "echo \"\$0\" | grep -q 'permission denied'" "$out"
out=$(reader_sql "DELETE FROM cdsgate_$DS.patients_v1")
check "the reader cannot DELETE ($out)" sh -c "echo \"\$0\" | grep -q 'permission denied'" "$out"
out=$(reader_sql "CREATE TABLE cdsgate_$DS.x (a int)")
check "the reader cannot CREATE in the schema ($out)" sh -c "echo \"\$0\" | grep -q 'permission denied'" "$out"
out=$(reader_sql "SELECT pg_read_file('$D/in/patients.csv')")
check "the reader cannot read the raw file ($out)" sh -c "echo \"\$0\" | grep -q 'permission denied'" "$out"
NAME1=$(python3 -c 'import csv,sys; r=csv.DictReader(open(sys.argv[1])); print(next(r)["name"])' "$D/in/patients.csv")
check "no raw name ('$NAME1') in anything the reader can read" \
	test "$(reader_sql "SELECT count(*) FROM cdsgate_$DS.patients p WHERE p::text LIKE '%$NAME1%'")" = 0
check "the audit log: dataset.mount with backend postgres" \
	sh -c "grep 'dataset.mount' '$D/audit/audit.log' | grep -q '\"backend\":\"postgres\"'"

# ---- bad requests change nothing ----
BEFORE=$(dump)
code=$(api POST "/v1/datasets/$DS/mount" '{"backend": "mysql"}')
check "backend mysql -> 422 ($(head -c 120 "$D/resp"))" test "$code" = 422
code=$(api POST "/v1/datasets/$DS/mount" '{"backend": 5}')
check "backend of the wrong type -> 400" test "$code" = 400
code=$(api POST "/v1/datasets/$DS/mount" '{"backend": "postgres", "schema": "x"}')
check "an unknown field -> 400 unknown_field" sh -c "[ $code = 400 ] && grep -q unknown_field '$D/resp'"
code=$(api POST "/v1/datasets/$DS/mount" '{"backend": "postgres"}')
check "mounting it again -> 409 state" test "$code" = 409
check "the store is unchanged by all of these" test "$BEFORE" = "$(dump)"

# ---- a dataset that failed the gate never reaches the database ----
"$CDSGATE" dataset import "$D/in/patients.csv" --name tight \
	--qi age,sex,zip,race,admission_date --identifying patient_id,name \
	--sensitive diagnosis --insensitive length_of_stay \
	--hierarchies "$D/in" --pu-threshold 0.01 --population 4.031e6 \
	--residual 100=0.0 --suppression-limit 0 --json > "$D/bad.json" 2>/dev/null
BAD=$(json "$D/bad.json" 'j["id"]')
check "a dataset fails the gate" test "$(json "$D/bad.json" 'j["state"]')" = failed
code=$(api POST "/v1/datasets/$BAD/mount" '{"backend": "postgres"}')
check "POST mount {backend: postgres} of it -> 409 gate, saying why ($(head -c 200 "$D/resp"))" \
	sh -c "[ $code = 409 ] && grep -q '\"gate\"' '$D/resp' && grep -q 'only a dataset that passed' '$D/resp'"
"$CDSGATE" dataset mount "$BAD" --backend postgres > /dev/null 2> "$D/bm.err"; rc=$?
check "cdsgate dataset mount --backend postgres refuses it too (exit $rc)" \
	sh -c "[ $rc -ne 0 ] && grep -q 'only a dataset that passed' '$D/bm.err'"
check "no schema for it in the database" test "$(sql analytics "SELECT count(*) FROM pg_namespace WHERE nspname = 'cdsgate_$BAD'")" = 0
check "the audit log has dataset.mount.refused for it" \
	sh -c "grep 'dataset.mount.refused' '$D/audit/audit.log' | grep -q '\"id\":$BAD\\|gate'"

# ---- unmount drops it ----
"$CDSGATE" dataset unmount "$DS" > /dev/null 2> "$D/u.err"; rc=$?
check "cdsgate dataset unmount (exit $rc: $(head -c 160 "$D/u.err"))" test "$rc" -eq 0
check "the schema is gone from the database" \
	test "$(sql analytics "SELECT count(*) FROM pg_namespace WHERE nspname = 'cdsgate_$DS'")" = 0
out=$(reader_sql "SELECT count(*) FROM cdsgate_$DS.patients")
check "the reader's SELECT fails now ($out)" sh -c "echo \"\$0\" | grep -q 'does not exist'" "$out"
check "the store says passed, no backend" \
	test "$(sqlite3 "$D/state/store.db" "select state || '|' || mount_backend from datasets where id=$DS")" = "passed|"
check "the audit log: dataset.unmount with backend postgres" \
	sh -c "grep 'dataset.unmount' '$D/audit/audit.log' | grep -q '\"backend\":\"postgres\"'"

# ---- --backend embedded overrides the default ----
"$CDSGATE" dataset mount "$DS" --backend embedded > /dev/null 2> "$D/e.err"; rc=$?
check "cdsgate dataset mount --backend embedded (exit $rc)" \
	sh -c "[ $rc -eq 0 ] && [ -f '$D/mnt/$DS/data.csv' ]"
check "and nothing went to PostgreSQL" \
	test "$(sql analytics "SELECT count(*) FROM pg_namespace WHERE nspname = 'cdsgate_$DS'")" = 0
"$CDSGATE" dataset unmount "$DS" > /dev/null 2>&1

# ---- the mounter over TCP with a password, under its seccomp filter ----
CUST_PW=$(python3 -c 'import secrets; print(secrets.token_urlsafe(18))')
sql postgres "ALTER ROLE custodian PASSWORD '$CUST_PW'" > /dev/null
kill -TERM "$SRV_PID"; wait "$SRV_PID"; SRV_PID=
serve_config "\"pg_conninfo\": \"host=127.0.0.1 port=$PGPORT dbname=analytics user=custodian password=$CUST_PW\", \"pg_reader_role\": \"bi_reader\""
check "cdsgated serve restarts with a TCP conninfo (default backend: embedded)" serve_start
check "the mounter runs under its filter (profile pgmount)" wait_line "$D/err" 'postgres mounter: .*profile pgmount' 10
"$CDSGATE" dataset mount "$DS" --backend postgres > /dev/null 2> "$D/t.err"; rc=$?
check "mount --backend postgres over TCP (exit $rc: $(head -c 160 "$D/t.err"))" \
	sh -c "[ $rc -eq 0 ] && [ \"\$(PGPASSWORD='$READER_PW' psql -X -At 'host=127.0.0.1 port=$PGPORT dbname=analytics user=bi_reader' -c 'SELECT count(*) FROM cdsgate_$DS.patients')\" = $ROWS ]"
"$CDSGATE" dataset unmount "$DS" > /dev/null 2>&1; rc=$?
check "and unmount over TCP (exit $rc)" sh -c "[ $rc -eq 0 ] && [ \"\$(sqlite3 '$D/state/store.db' 'select state from datasets where id=$DS')\" = passed ]"
check "the mounter was not killed by its filter" sh -c "! grep -q 'does not allow syscall\|Bad system call' '$D/err'"

# ---- the server down: 502, the store as it was ----
pg_stop
BEFORE=$(dump)
code=$(api POST "/v1/datasets/$DS/mount" '{"backend": "postgres"}')
check "PostgreSQL down: mount -> 502 with the reason ($(head -c 200 "$D/resp"))" \
	sh -c "[ $code = 502 ] && grep -q 'PostgreSQL' '$D/resp'"
check "the store says passed again (the mount was undone)" \
	test "$(sqlite3 "$D/state/store.db" "select state from datasets where id=$DS")" = passed

kill -TERM "$SRV_PID"; wait "$SRV_PID"; rc=$?; SRV_PID=
check "SIGTERM: exit 0 (exit $rc)" test "$rc" -eq 0
"$CDSGATE" audit verify "$D/audit/audit.log" --key "$D/audit.pub" > "$D/verify.out"; rc=$?
check "the audit log verifies ($(cat "$D/verify.out"))" test "$rc" -eq 0
done_testing
