#!/usr/bin/env bash
# 061-api-tcp: the admin API's optional TCP listener.  TLS only
# (libmicrohttpd's GnuTLS, 1.2 at least), bearer tokens only: a custodian
# token may change things (curl and the cdsgate CLI), an auditor token
# may only read (403), a wrong or missing token gets 401 with
# WWW-Authenticate and the store does not change; plain HTTP, TLS 1.1,
# bad tokens files and a listener without a certificate are refused.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-serve.sh"

serve_prereqs
command -v openssl >/dev/null || skip_all "openssl not installed"
serve_dirs
S=$D/state/store.db
PORT=$(free_port)
URL=https://127.0.0.1:$PORT

# A self-signed certificate for 127.0.0.1; root's key.
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 \
	-addext "subjectAltName=IP:127.0.0.1" -keyout "$D/key.pem" -out "$D/cert.pem" 2>/dev/null
chmod 0600 "$D/key.pem"

# Tokens: printed once; the file gets only the line with the hash.
"$CDSGATE" token new custodian alice > "$D/alice.out" 2>/dev/null
"$CDSGATE" token new auditor bob > "$D/bob.out" 2>/dev/null
check "token new prints the token and a ROLE NAME SHA256 line" \
	grep -qE '^custodian alice [0-9a-f]{64}$' "$D/alice.out"
ALICE=$(head -1 "$D/alice.out")
BOB=$(head -1 "$D/bob.out")
check "the line holds SHA-256 of the token, not the token" \
	test "$(printf '%s' "$ALICE" | sha256sum | cut -d' ' -f1)" = "$(sed -n '2s/.* //p' "$D/alice.out")"
check "a bad role is refused" quiet bash -c "! '$CDSGATE' token new admin carol"
TOK=$D/tokens
{ echo "# admin API tokens"; sed -n 2p "$D/alice.out"; sed -n 2p "$D/bob.out"; } > "$TOK"
chmod 0600 "$TOK"
printf '%s\n' "$ALICE" > "$D/alice.tok"; printf '%s\n' "$BOB" > "$D/bob.tok"
chmod 0600 "$D/alice.tok" "$D/bob.tok"
check "no token is stored in the tokens file" quiet bash -c "! grep -qF -e '$ALICE' -e '$BOB' '$TOK'"

API_PID=
# start_api [EXTRA OPTIONS...]: `cdsgated api` with the TCP listener.
start_api() {
	"$CDSGATED" api --socket "$SOCK" --store "$S" --state-dir "$D/state" \
		--audit-log "$D/audit/audit.log" --audit-key "$D/audit/key.pem" "$@" \
		> "$D/api.out" 2> "$D/api.err" &
	API_PID=$!
	wait_line "$D/api.out" '^ready ' 15 "$API_PID"
}
# refuses WHAT REGEX OPTIONS...: it exits non-zero, saying REGEX, binding nothing.
refuses() {
	local what=$1 re=$2; shift 2
	"$CDSGATED" api --socket "$SOCK" --store "$S" --state-dir "$D/state" \
		--audit-log "$D/audit/audit.log" --audit-key "$D/audit/key.pem" "$@" \
		> "$D/bad.out" 2> "$D/bad.err" &
	local pid=$!
	wait_line "$D/bad.out" '^ready ' 5 "$pid" && { stop_pid $pid; not_ok "$what: it started"; return; }
	wait $pid; local rc=$?
	if [ $rc -ne 0 ] && grep -qE "$re" "$D/bad.err"; then ok "$what (exit $rc: $(head -1 "$D/bad.err"))"
	else not_ok "$what (exit $rc)"; cat "$D/bad.err" >&2; fi
}
TLS=(--listen "127.0.0.1:$PORT" --tls-cert "$D/cert.pem" --tls-key "$D/key.pem")

# ---- refusals at start ----
refuses "--listen without --tls-cert refuses to start" 'needs api_tls_cert' \
	--listen "127.0.0.1:$PORT" --tls-key "$D/key.pem" --tokens "$TOK"
refuses "--listen without --tokens refuses to start" 'never plaintext nor unauthenticated' \
	--listen "127.0.0.1:$PORT" --tls-cert "$D/cert.pem" --tls-key "$D/key.pem"
printf 'custodian alice %s\nroot eve %s\n' "$(printf x | sha256sum | cut -c1-64)" \
	"$(printf y | sha256sum | cut -c1-64)" > "$D/badrole"; chmod 0600 "$D/badrole"
refuses "a tokens file with a bad role names file:line" "$D/badrole:2: ROLE must be" "${TLS[@]}" --tokens "$D/badrole"
printf 'auditor bob 12345\n' > "$D/badhash"; chmod 0600 "$D/badhash"
refuses "a tokens file with a short hash names file:line" "$D/badhash:1: the hash must be 64 hex" \
	"${TLS[@]}" --tokens "$D/badhash"
printf 'auditor bob %s extra\n' "$(printf y | sha256sum | cut -c1-64)" > "$D/badextra"; chmod 0600 "$D/badextra"
refuses "a tokens file with a fourth field names file:line" "$D/badextra:1: wants" "${TLS[@]}" --tokens "$D/badextra"
{ cat "$TOK"; sed -n 2p "$D/alice.out" | sed 's/ alice / alice2 /'; } > "$D/dup"; chmod 0600 "$D/dup"
refuses "a token on two lines names file:line" "$D/dup:4: duplicate hash" "${TLS[@]}" --tokens "$D/dup"
printf 'auditor bob %s\n' "$(head -c 300 /dev/zero | tr '\0' a)" > "$D/long"; chmod 0600 "$D/long"
refuses "an over-long line names file:line" "$D/long:1: line too long" "${TLS[@]}" --tokens "$D/long"
: > "$D/empty"; chmod 0600 "$D/empty"
refuses "an empty tokens file is refused" "$D/empty: must be a non-empty" "${TLS[@]}" --tokens "$D/empty"
cp "$TOK" "$D/tok644"; chmod 0644 "$D/tok644"
refuses "a tokens file of mode 0644 is refused" 'tok644: must be .*mode 0644' "${TLS[@]}" --tokens "$D/tok644"
cp "$TOK" "$D/toknobody"; chown 65534 "$D/toknobody"
refuses "a tokens file not owned by root is refused" 'owned by root' "${TLS[@]}" --tokens "$D/toknobody"
chmod 0644 "$D/key.pem"
refuses "a TLS key readable by others is refused" 'key.pem: must be' "${TLS[@]}" --tokens "$TOK"
chmod 0600 "$D/key.pem"
refuses "a malformed api_listen is refused" 'wants a numeric' --listen "localhost" \
	--tls-cert "$D/cert.pem" --tls-key "$D/key.pem" --tokens "$TOK"

# ---- the listener ----
check "cdsgated api starts with --listen (ready names https://)" start_api "${TLS[@]}" --tokens "$TOK"
grep -q "ready .* https://127.0.0.1:$PORT" "$D/api.out" || diag "$(cat "$D/api.out" "$D/api.err")"
check "the api still runs under its seccomp filter" grep -q 'sandbox seccomp, profile api' "$D/api.err"

# tcp TOKEN METHOD PATH [BODY]: status on stdout, body in $D/resp, headers in $D/hdr.
tcp() {
	local tok=$1 out auth=()
	[ -n "$tok" ] && auth=(-H "Authorization: Bearer $tok")
	out=$(printf '%s' "${4-}" | curl -s -D "$D/hdr" -w '\n%{http_code}' --cacert "$D/cert.pem" \
		"${auth[@]}" -X "$2" ${4:+-H 'Content-Type: application/json' --data-binary @-} "$URL$3")
	printf '%s' "${out%$'\n'*}" > "$D/resp"
	echo "${out##*$'\n'}"
}
is() { local want=$1; shift; local got; got=$(tcp "$@")
	if [ "$got" = "$want" ]; then ok "$2 $3 -> $want"; else not_ok "$2 $3 -> $got, want $want ($(cat "$D/resp"))"; fi; }

is 200 "$ALICE" GET /v1/recipients
is 201 "$ALICE" POST /v1/recipients '{"id":"r1","name":"Over TLS"}'
is 200 "$BOB" GET /v1/recipients/r1
check "the auditor reads what the custodian added" grep -q '"Over TLS"' "$D/resp"
before=$(dump)
is 403 "$BOB" POST /v1/recipients '{"id":"r2","name":"Auditor"}'
is 403 "$BOB" POST /v1/recipients/r1/disable
is 401 "" GET /v1/recipients
check "401 carries WWW-Authenticate: Bearer" grep -qi '^WWW-Authenticate: Bearer' "$D/hdr"
is 401 "" POST /v1/recipients '{"id":"r3","name":"Nobody"}'
is 401 "${ALICE}x" POST /v1/recipients '{"id":"r4","name":"Wrong"}'
is 401 "$(head -c 43 /dev/urandom | base64 | tr -d '/+=' | head -c 43)" POST /v1/recipients/r1/disable
out=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$D/cert.pem" -H "Authorization: Basic $(printf 'alice:%s' "$ALICE" | base64 -w0)" "$URL/v1/recipients")
check "Basic auth with the token is not accepted ($out)" test "$out" = 401
check "nothing a refused request sent reached the store" test "$(dump)" = "$before"
check "refusals are logged with the client's address" grep -q 'refused POST /v1/recipients from 127.0.0.1 over TCP' "$D/api.err"
is 401 "" GET '/v1/x%0Aforged-line%0D'
check "a refused path is logged escaped (no forged log line)" \
	bash -c "grep -qF 'refused GET /v1/x\\x0aforged-line\\x0d from' '$D/api.err' && ! grep -q '^forged-line' '$D/api.err'"

# the CLI over TCP: the server's certificate verified, the token from a 0600 file
check "cdsgate --api ... recipient add (custodian token)" quiet "$CDSGATE" --api "$URL" \
	--token-file "$D/alice.tok" --cacert "$D/cert.pem" recipient add r5 --name "By CLI"
"$CDSGATE" --api "$URL" --token-file "$D/bob.tok" --cacert "$D/cert.pem" recipient list > "$D/cli.out" 2>&1
check "cdsgate --api ... recipient list (auditor token) sees it" grep -q '^r5 ' "$D/cli.out"
CDSGATE_API=$URL CDSGATE_TOKEN_FILE=$D/bob.tok CDSGATE_CACERT=$D/cert.pem \
	"$CDSGATE" recipient disable r5 > "$D/cli.out" 2>&1; rc=$?
check "the same from the environment: the auditor's disable is 403 (exit $rc)" \
	bash -c "[ $rc -eq 2 ] && grep -q 'HTTP 403' '$D/cli.out'"
"$CDSGATE" --api "$URL" --token-file "$D/alice.tok" recipient list > "$D/cli.out" 2>&1; rc=$?
check "without --cacert the self-signed certificate is refused (exit $rc)" \
	bash -c "[ $rc -ne 0 ] && grep -qi 'certificate' '$D/cli.out'"
chmod 0644 "$D/alice.tok"
"$CDSGATE" --api "$URL" --token-file "$D/alice.tok" --cacert "$D/cert.pem" recipient list > "$D/cli.out" 2>&1; rc=$?
check "a token file readable by others is refused by the CLI" \
	bash -c "[ $rc -ne 0 ] && grep -q 'chmod 600' '$D/cli.out'"
chmod 0600 "$D/alice.tok"
"$CDSGATE" --api "http://127.0.0.1:$PORT" --token-file "$D/alice.tok" recipient list > "$D/cli.out" 2>&1
check "the CLI will not send a token over http://" grep -q 'only https://' "$D/cli.out"

# the audit log names the token, not a uid
"$CDSGATE" audit list "$D/audit/audit.log" --json > "$D/audit.json"
check "changes over TCP are audited with the token's NAME" python3 -c '
import json,sys
recs=[json.loads(l) for l in open(sys.argv[1]) if l.strip()]
adds=[r for r in recs if r["type"]=="recipient.add"]
assert [r["data"].get("by_token") for r in adds]==["alice","alice"], adds
assert all("by_uid" not in r["data"] for r in adds)
' "$D/audit.json"

# ---- the wire ----
out=$(curl -s -m 5 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/v1/recipients" 2>&1)
check "plain http to the TLS port gets no HTTP reply ($out)" test "$out" = 000
if openssl s_client -help 2>&1 | grep -q -- '-tls1_1'; then
	# SECLEVEL=0: let the local OpenSSL offer 1.1 if it can at all
	echo | timeout 10 openssl s_client -connect "127.0.0.1:$PORT" -tls1_1 \
		-cipher 'DEFAULT:@SECLEVEL=0' > "$D/t11.out" 2>&1
	if grep -qiE 'no protocols available|unsupported protocol' "$D/t11.out"; then
		skip "TLS 1.1 refused: the local OpenSSL cannot offer TLS 1.1 ($(grep -iE -m1 'protocol' "$D/t11.out"))"
	else
		# a ClientHello went out; no certificate and no cipher came back
		check "TLS 1.1 is refused by the server (no certificate, no cipher)" \
			bash -c "grep -qE 'written [1-9][0-9]* bytes' '$D/t11.out' &&
			    grep -q 'no peer certificate available' '$D/t11.out' &&
			    grep -q 'Cipher is (NONE)' '$D/t11.out'"
	fi
	echo | timeout 10 openssl s_client -connect "127.0.0.1:$PORT" -tls1_2 > "$D/t12.out" 2>&1
	check "TLS 1.2 is accepted" grep -qE 'Protocol *: TLSv1.2' "$D/t12.out"
	echo | timeout 10 openssl s_client -connect "127.0.0.1:$PORT" -tls1_3 > "$D/t13.out" 2>&1
	check "TLS 1.3 is accepted" grep -qE 'Protocol *: TLSv1.3|New, TLSv1.3' "$D/t13.out"
else
	skip "openssl s_client has no -tls1_1"
fi
# one address holds at most 16 connections (TLS handshakes cost the server)
check "one address gets 16 connections; the 17th to 20th are closed" python3 - "$PORT" <<'PY'
import socket, sys, time
socks = [socket.create_connection(("127.0.0.1", int(sys.argv[1]))) for _ in range(20)]
time.sleep(1)
closed = 0
for s in socks:
    s.settimeout(0.3)
    try:
        closed += s.recv(1) == b""
    except socket.timeout:
        pass
    except ConnectionResetError:
        closed += 1
assert closed == 4, closed
PY
is 200 "$BOB" GET /v1/health
check "the api survived all of that" kill -0 "$API_PID"
check "the UNIX socket still uses peer credentials (root is a custodian)" test "$(api GET /v1/recipients)" = 200
stop_pid "$API_PID"; wait "$API_PID" 2>/dev/null

# ---- cdsgated serve: the same keys in its config ----
serve_config "\"api_listen\": \"127.0.0.1:$PORT\""
"$CDSGATED" serve --config "$CONF" > "$D/out" 2> "$D/err"; rc=$?
check "serve: api_listen without api_tls_cert refuses to start (exit $rc)" \
	bash -c "[ $rc -ne 0 ] && grep -q 'api_listen needs api_tls_cert' '$D/err'"
serve_config "\"api_listen\": \"127.0.0.1:$PORT\", \"api_tls_cert\": \"$D/cert.pem\",
  \"api_tls_key\": \"$D/key.pem\", \"api_tokens\": \"$TOK\""
if serve_start; then
	ok "serve starts with api_listen"
	is 201 "$ALICE" POST /v1/recipients '{"id":"r6","name":"Via serve"}'
	is 401 "" GET /v1/recipients
else
	not_ok "serve starts with api_listen ($(tail -3 "$D/err"))"
fi
kill "$SRV_PID" 2>/dev/null; wait "$SRV_PID" 2>/dev/null

done_testing
