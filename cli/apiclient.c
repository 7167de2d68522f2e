/*
 * cli/apiclient.c — HTTP over the daemon's UNIX socket with libcurl
 * (a well-kept client beats writing HTTP/1.1 framing by hand), replies
 * parsed with jansson and bounded in size.
 *
 * Runs as the invoking user; the reply is from our own daemon but is
 * still parsed defensively.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <curl/curl.h>

#include "cli/apiclient.h"
#include "cli/cli.h"
#include "common/buf.h"

#define REPLY_MAX	(16 * 1024 * 1024)

static size_t
on_data(char *p, size_t size, size_t n, void *arg)
{
	return wbuf_put(arg, p, size * n) == BUF_OK ? size * n : 0;
}

/*
 * $CDSGATE_API (https://HOST:PORT): the TCP listener, with the bearer
 * token from $CDSGATE_TOKEN_FILE (the user's, 0600) and the server's
 * certificate verified (against $CDSGATE_CACERT if set).  Otherwise the
 * UNIX socket.  Sets c's URL for path; 0 or -1 with err.
 */
static int
endpoint(CURL *c, const char *sock, const char *path,
    struct curl_slist **h, char *err, size_t errlen)
{
	const char *api = getenv("CDSGATE_API"), *tf, *ca;
	char url[1024], line[600];
	struct stat st;
	FILE *f;

	if (api == NULL) {
		snprintf(url, sizeof(url), "http://cdsgate%s", path);
		curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, sock);
		return curl_easy_setopt(c, CURLOPT_URL, url) == CURLE_OK ? 0 : -1;
	}
	if (strncmp(api, "https://", 8) != 0)
		return snprintf(err, errlen, "--api %s: only https:// (the "
		    "TCP API is TLS only)", api), -1;
	if ((tf = getenv("CDSGATE_TOKEN_FILE")) == NULL)
		return snprintf(err, errlen, "--api needs --token-file"), -1;
	if ((f = fopen(tf, "re")) == NULL || fstat(fileno(f), &st) != 0 ||
	    (st.st_mode & 077) || fgets(line, sizeof(line), f) == NULL) {
		snprintf(err, errlen, "--token-file %s: %s", tf, f == NULL ?
		    strerror(errno) : (st.st_mode & 077) ? "readable by "
		    "others (chmod 600)" : "empty");
		if (f != NULL)
			fclose(f);
		return -1;
	}
	fclose(f);
	line[strcspn(line, "\r\n")] = 0;
	snprintf(url, sizeof(url), "Authorization: Bearer %s", line);
	*h = curl_slist_append(*h, url);
	explicit_bzero(line, sizeof(line));
	explicit_bzero(url, sizeof(url));
	snprintf(url, sizeof(url), "%s%s", api, path);
	if ((ca = getenv("CDSGATE_CACERT")) != NULL)
		curl_easy_setopt(c, CURLOPT_CAINFO, ca);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
	curl_easy_setopt(c, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "https");
	return curl_easy_setopt(c, CURLOPT_URL, url) == CURLE_OK ? 0 : -1;
}

/* The request itself; fills w with the body and *status. */
static int
perform(const char *sock, const char *method, const char *path,
    const char *body, struct wbuf *w, long *status, char *err, size_t errlen)
{
	char cerr[CURL_ERROR_SIZE] = "";
	struct curl_slist *h = NULL;
	CURL *c;
	CURLcode rc;

	if ((c = curl_easy_init()) == NULL)
		return snprintf(err, errlen, "out of memory"), -1;
	h = curl_slist_append(h, "Content-Type: application/json");
	if (endpoint(c, sock, path, &h, err, errlen) != 0) {
		curl_slist_free_all(h);
		curl_easy_cleanup(c);
		return -1;
	}
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, w);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
	if (body != NULL)
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	rc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	if (rc != CURLE_OK)
		return snprintf(err, errlen, "cannot reach the cdsgate daemon "
		    "at %s: %s", getenv("CDSGATE_API") != NULL ?
		    getenv("CDSGATE_API") : sock, cerr[0] ? cerr : curl_easy_strerror(rc)),
		    -1;
	return 0;
}

int
apiclient_call(const char *sock, const char *method, const char *path,
    json_t *body, struct apiclient_reply *out, char *err, size_t errlen)
{
	struct wbuf w;
	json_error_t je;
	char *text = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	if (sock == NULL && (sock = getenv("CDSGATE_SOCKET")) == NULL)
		sock = APICLIENT_DEFAULT_SOCKET;
	if (body != NULL && (text = json_dumps(body, JSON_COMPACT)) == NULL)
		return snprintf(err, errlen, "out of memory"), -1;
	wbuf_init(&w, REPLY_MAX);
	rc = perform(sock, method, path, text, &w, &out->status, err, errlen);
	free(text);
	if (rc == 0 && w.len > 0 && (out->json = json_loadb((char *)w.d,
	    w.len, 0, &je)) == NULL) {
		snprintf(err, errlen, "the daemon's reply (HTTP %ld) is not "
		    "JSON: %s", out->status, je.text);
		rc = -1;
	}
	wbuf_free(&w);
	return rc;
}

void
apiclient_reply_free(struct apiclient_reply *r)
{
	json_decref(r->json);
	r->json = NULL;
}

int
apiclient_finish(int called, struct apiclient_reply *r, const char *err,
    int json, void (*human)(json_t *))
{
	json_t *e;
	int rc;

	if (called != 0) {
		fprintf(stderr, "cdsgate: %s\n", err);
		return EXIT_INTERNAL;
	}
	if (r->status >= 200 && r->status < 300) {
		if (json || human == NULL)
			json_dumpf(r->json, stdout, JSON_INDENT(2) |
			    JSON_SORT_KEYS), printf("\n");
		else
			human(r->json);
		rc = 0;
	} else {
		e = json_object_get(json_object_get(r->json, "error"),
		    "message");
		fprintf(stderr, "cdsgate: %s (HTTP %ld)\n", json_is_string(e) ?
		    json_string_value(e) : "the daemon refused", r->status);
		if (json)
			json_dumpf(r->json, stdout, JSON_INDENT(2)), printf("\n");
		rc = r->status >= 400 && r->status < 500 ? EXIT_BAD_INPUT :
		    EXIT_INTERNAL;
	}
	apiclient_reply_free(r);
	return rc;
}

/* Index of name in the NULL-terminated list, or -1. */
static int
opt_index(const char *const *list, const char *name)
{
	int i;

	for (i = 0; list != NULL && list[i] != NULL; i++)
		if (strcmp(list[i], name) == 0)
			return i;
	return -1;
}

int
apiclient_opts(int argc, char **argv, const char *usage,
    const char *const *extra, const char **vals, struct apiclient_opts *o)
{
	int i, k;

	memset(o, 0, sizeof(*o));
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			o->json = 1;
		else if (strcmp(argv[i], "--socket") == 0 && i + 1 < argc)
			o->socket = argv[++i];
		else if ((k = opt_index(extra, argv[i])) >= 0 && i + 1 < argc)
			vals[k] = argv[++i];
		else if (argv[i][0] == '-')
			return cli_usage_error(usage, "%s: unknown option or "
			    "missing value", argv[i]);
		else if (o->npos < sizeof(o->pos) / sizeof(o->pos[0]))
			o->pos[o->npos++] = argv[i];
		else
			return cli_usage_error(usage, "too many arguments");
	}
	return 0;
}

int
apiclient_path(char *dst, size_t len, const char *prefix, const char *id,
    const char *suffix)
{
	char *e = curl_easy_escape(NULL, id, 0);
	int n;

	if (e == NULL)
		return -1;
	n = snprintf(dst, len, "%s%s%s", prefix, e, suffix);
	curl_free(e);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

int
apiclient_get_cmd(int argc, char **argv, const char *usage, const char *path,
    void (*human)(json_t *))
{
	struct apiclient_opts o;
	struct apiclient_reply r;
	char err[512];
	int rc;

	if ((rc = apiclient_opts(argc, argv, usage, NULL, NULL, &o)) != 0)
		return rc;
	if (o.npos != 0)
		return cli_usage_error(usage, "no arguments expected");
	rc = apiclient_call(o.socket, "GET", path, NULL, &r, err, sizeof(err));
	return apiclient_finish(rc, &r, err, o.json, human);
}

int
apiclient_id_cmd(int argc, char **argv, const char *usage, const char *method,
    const char *prefix, const char *suffix, void (*human)(json_t *))
{
	struct apiclient_opts o;
	struct apiclient_reply r;
	char err[512], path[160];
	int rc;

	if ((rc = apiclient_opts(argc, argv, usage, NULL, NULL, &o)) != 0)
		return rc;
	if (o.npos != 1)
		return cli_usage_error(usage, "one ID expected");
	if (apiclient_path(path, sizeof(path), prefix, o.pos[0], suffix) != 0)
		return cli_usage_error(usage, "ID too long");
	rc = apiclient_call(o.socket, method, path, NULL, &r, err, sizeof(err));
	return apiclient_finish(rc, &r, err, o.json, human);
}

static int
on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow,
    curl_off_t ultotal, curl_off_t ulnow)
{
	(void)dltotal;
	(void)dlnow;
	if (ultotal > 0)
		fprintf(stderr, "\r  uploading %s: %3d%%", (const char *)arg,
		    (int)(ulnow * 100 / ultotal));
	return 0;
}

/* The PUT itself; the reply body into w. */
static int
upload_perform(const char *sock, FILE *f, curl_off_t size, const char *path,
    struct wbuf *w, long *status, char *err, size_t errlen)
{
	char cerr[CURL_ERROR_SIZE] = "";
	struct curl_slist *h = NULL;
	CURL *c;
	CURLcode rc;

	if ((c = curl_easy_init()) == NULL)
		return snprintf(err, errlen, "out of memory"), -1;
	h = curl_slist_append(h, "Content-Type: application/octet-stream");
	if (endpoint(c, sock, "/v1/uploads", &h, err, errlen) != 0) {
		curl_slist_free_all(h);
		curl_easy_cleanup(c);
		return -1;
	}
	curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
	curl_easy_setopt(c, CURLOPT_READDATA, f);
	curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, size);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, w);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	if (isatty(2)) {
		curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
		curl_easy_setopt(c, CURLOPT_XFERINFODATA, path);
		curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	}
	rc = curl_easy_perform(c);
	if (isatty(2))
		fprintf(stderr, "\n");
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	if (rc != CURLE_OK)
		return snprintf(err, errlen, "uploading %s: %s", path,
		    cerr[0] ? cerr : curl_easy_strerror(rc)), -1;
	return 0;
}

int
apiclient_upload(const char *sock, const char *path, char sha[65], char *err,
    size_t errlen)
{
	struct wbuf w;
	struct stat st;
	json_t *j = NULL, *e;
	long status = 0;
	FILE *f;
	int rc;

	if (sock == NULL && (sock = getenv("CDSGATE_SOCKET")) == NULL)
		sock = APICLIENT_DEFAULT_SOCKET;
	if ((f = fopen(path, "re")) == NULL || fstat(fileno(f), &st) != 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		if (f != NULL)
			fclose(f);
		return -1;
	}
	wbuf_init(&w, 1 << 20);
	rc = upload_perform(sock, f, (curl_off_t)st.st_size, path, &w, &status,
	    err, errlen);
	fclose(f);
	if (rc == 0 && (j = json_loadb((char *)w.d, w.len, 0, NULL)) != NULL &&
	    status == 201 && json_is_string(json_object_get(j, "upload")))
		snprintf(sha, 65, "%s", json_string_value(json_object_get(j,
		    "upload")));
	else if (rc == 0) {
		e = json_object_get(json_object_get(j, "error"), "message");
		snprintf(err, errlen, "uploading %s: %s (HTTP %ld)", path,
		    json_is_string(e) ? json_string_value(e) : "refused",
		    status);
		rc = -1;
	}
	json_decref(j);
	wbuf_free(&w);
	return rc;
}
