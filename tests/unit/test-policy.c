/*
 * tests/unit/test-policy.c — policy/spec.c (the option table: bounds,
 * bad values refused with a message naming the option, defaults, the
 * policy file and its precedence, URL and listen parsing) and
 * policy/chromium.c (the managed policy carries every key the kiosk
 * lists, blocks the internal schemes, allows the backend's origin and
 * nothing else).
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/chromium.h"
#include "policy/spec.h"
#include "tests/tap.h"

#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

static char tmpdir[] = "/tmp/cdsgate-test-policy.XXXXXX";

/* The option as errors name it: "--key-rate" for key_rate. */
static const char *
flag(const char *name)
{
	static char buf[64];
	char *p;

	snprintf(buf, sizeof(buf), "--%s", name);
	for (p = buf; *p != '\0'; p++)
		if (*p == '_')
			*p = '-';
	return buf;
}

/* ---- spec: the table itself ---- */

/* Every entry is well formed: unique name, help, sane bounds, and its
 * default (if any) is accepted by its own setter. */
static void
test_table(void)
{
	struct session_spec s;
	struct policy_error err;
	size_t i, j;
	int bad = 0;

	memset(&s, 0, sizeof(s));
	for (i = 0; i < spec_noptions; i++) {
		const struct spec_option *o = &spec_options[i];

		for (j = i + 1; j < spec_noptions; j++)
			if (strcmp(o->name, spec_options[j].name) == 0)
				bad++;
		if (o->help == NULL || o->help[0] == '\0' || o->min > o->max ||
		    (o->scope & (SPEC_CLI | SPEC_FILE)) == 0)
			bad++;
		if (o->def != NULL && spec_set(&s, o, o->def, &err) != POLICY_OK) {
			tap_diag("%s: default %s refused: %s", o->name, o->def,
			    err.msg);
			bad++;
		}
	}
	spec_free(&s);
	tap_ok(spec_noptions >= 20 && bad == 0,
	    "the option table (%zu entries): unique names, help, min <= max, "
	    "defaults accepted", spec_noptions);
}

static void
test_defaults(void)
{
	struct session_spec s;
	struct policy_error err;

	memset(&s, 0, sizeof(s));
	tap_ok(spec_init(&s, &err) == POLICY_OK, "spec_init");
	tap_ok(s.width == 1280 && s.height == 800, "default geometry 1280x800");
	tap_ok(s.key_rate == 10 && s.key_burst == 20,
	    "default keys 10/s, burst 20");
	tap_ok(s.button_rate == 10 && s.button_burst == 20 &&
	    s.motion_rate == 60, "default buttons 10/s burst 20, motion 60/s");
	tap_ok(s.alarm_seconds == 5 && s.alarm_disconnect == 0,
	    "default alarm after 5 s, no disconnect");
	tap_ok(s.idle_timeout == 1800 && s.max_duration == 28800,
	    "default idle 1800 s, max duration 28800 s");
	tap_ok(s.observer == 0 && s.ws_origins == NULL,
	    "default no observer, websocket origins = the listen host");
	tap_ok(s.watermark == 1 && s.watermark_opacity == 0.15 &&
	    strcmp(s.watermark_text, "%r %s %t") == 0 &&
	    strcmp(s.watermark_layout, "tile") == 0,
	    "default watermark: on, \"%%r %%s %%t\", 0.15, tile");
	tap_ok(s.browser_restart_max == 5 && s.browser_restart_window == 60,
	    "default browser restarts 5 per 60 s");
	tap_ok(s.backend == NULL && s.listen == NULL && s.password_file == NULL,
	    "required options have no default");
	tap_ok(spec_check(&s, &err) == POLICY_EINPUT && strstr(err.msg,
	    "backend") != NULL, "spec_check without --backend: \"%s\"",
	    err.msg);
	spec_free(&s);
	spec_free(NULL);
	tap_ok(1, "spec_free(NULL) is a no-op");
}

/* The value just inside and just outside each numeric bound. */
static void
test_bounds(void)
{
	struct session_spec s;
	struct policy_error err;
	char v[64];
	size_t i;
	int n = 0, bad = 0;
	double d;

	memset(&s, 0, sizeof(s));
	spec_init(&s, &err);
	for (i = 0; i < spec_noptions; i++) {
		const struct spec_option *o = &spec_options[i];

		if (o->type != SPEC_NUMBER && o->type != SPEC_UINT)
			continue;
		n++;
		snprintf(v, sizeof(v), "%.15g", o->min);
		bad += spec_set(&s, o, v, &err) != POLICY_OK;
		snprintf(v, sizeof(v), "%.15g", o->max);
		bad += spec_set(&s, o, v, &err) != POLICY_OK;
		d = o->type == SPEC_UINT ? 1 : o->min / 2;
		if (o->min > 0) {
			snprintf(v, sizeof(v), "%.15g", o->min - d);
			if (spec_set(&s, o, v, &err) != POLICY_EINPUT ||
			    strstr(err.msg, flag(o->name)) == NULL) {
				tap_diag("%s=%s accepted or unnamed: %s",
				    o->name, v, err.msg);
				bad++;
			}
		}
		snprintf(v, sizeof(v), "%.15g", o->max + (o->type == SPEC_UINT ?
		    1 : o->max / 1000));
		if (spec_set(&s, o, v, &err) != POLICY_EINPUT ||
		    strstr(err.msg, flag(o->name)) == NULL) {
			tap_diag("%s=%s accepted or unnamed: %s", o->name, v,
			    err.msg);
			bad++;
		}
	}
	tap_ok(n >= 10 && bad == 0,
	    "%d numeric options: min and max accepted, just outside refused "
	    "with the option named", n);
	spec_free(&s);
}

struct badval {
	const char	*opt;
	const char	*value;
};

static void
test_bad_values(void)
{
	static const struct badval bad[] = {
		{ "key_rate", "abc" }, { "key_rate", "" }, { "key_rate", "nan" },
		{ "key_rate", "inf" }, { "key_rate", "1e999" },
		{ "key_rate", "10 " }, { "key_rate", "10/s" },
		{ "idle_timeout", "1.5" }, { "idle_timeout", "-1" },
		{ "idle_timeout", "0x10" }, { "idle_timeout", "99999999999999" },
		{ "key_rate", "0x1p3" },
		{ "observer", "maybe" }, { "observer", "2" },
		{ "geometry", "1280" }, { "geometry", "1280x" },
		{ "geometry", "x800" }, { "geometry", "319x800" },
		{ "geometry", "1280x4097" }, { "geometry", "1280x800x24" },
		{ "geometry", "-1280x800" },
		{ "recipient", "" }, { "recipient", "a b" },
		{ "recipient", "ok;rm" },
		{ "backend", "ftp://127.0.0.1/" }, { "backend", "127.0.0.1" },
		{ "backend", "http://user@127.0.0.1/" },
		{ "backend", "http://127.1/" }, { "backend", "http://0x7f.1/" },
		{ "backend", "http://a b/" }, { "backend", "http://[::1/" },
		{ "backend", "http://127.0.0.1:99999/" },
		{ "listen", "localhost:5900" }, { "listen", "127.0.0.1" },
		{ "listen", "127.0.0.1:65536" }, { "listen", "::1:5900" },
		{ "listen", "127.0.0.1:-1" },
		{ "watermark", "sometimes" }, { "watermark_opacity", "0.04" },
		{ "watermark_opacity", "0.61" }, { "watermark_opacity", "1" },
		{ "watermark_text", "" }, { "watermark_text", "%q" },
		{ "watermark_text", "100%" }, { "watermark_text", "tab\there" },
		{ "watermark_text", "caf\xc3\xa9" },
		{ "watermark_layout", "diagonal" }, { "watermark_layout", "" },
		{ "network_capture", "tcpdump" }, { "network_capture", "" },
	};
	struct session_spec s;
	struct policy_error err;
	const struct spec_option *o;
	size_t i;
	int r;

	memset(&s, 0, sizeof(s));
	spec_init(&s, &err);
	for (i = 0; i < NELEM(bad); i++) {
		if ((o = spec_find(bad[i].opt)) == NULL) {
			tap_ok(0, "option %s exists", bad[i].opt);
			continue;
		}
		err.msg[0] = '\0';
		r = spec_set(&s, o, bad[i].value, &err);
		tap_ok(r == POLICY_EINPUT && err.msg[0] != '\0',
		    "--%s '%s' refused: %s", bad[i].opt, bad[i].value, err.msg);
	}
	tap_ok(s.key_rate == 10 && s.idle_timeout == 1800 && s.width == 1280,
	    "refused values changed nothing");
	spec_free(&s);
}

static void
test_find_and_args(void)
{
	struct session_spec s;
	struct policy_error err;
	char *ok_argv[] = { "--backend", "http://127.0.0.1:8099/", "--listen",
	    "127.0.0.1:0", "--password-file", "/dev/null", "--key-rate=5",
	    "--observer", "--geometry", "1600x900", NULL };
	char *unknown[] = { "--no-such-flag", "1", NULL };
	char *missing[] = { "--key-rate", NULL };
	char *fileonly[] = { "--log", NULL };

	tap_ok(spec_find("key_rate") != NULL &&
	    spec_find("key_rate") == spec_find("--key-rate") &&
	    spec_find("key-rate") == spec_find("key_rate"),
	    "spec_find: key_rate, --key-rate and key-rate are one option");
	tap_ok(spec_find("nope") == NULL && spec_find("") == NULL,
	    "spec_find: unknown names are NULL");

	memset(&s, 0, sizeof(s));
	spec_init(&s, &err);
	tap_ok(spec_from_args(&s, 10, ok_argv, &err) == POLICY_OK &&
	    s.key_rate == 5 && s.observer == 1 && s.width == 1600 &&
	    s.height == 900, "spec_from_args: --name VALUE, --name=VALUE, "
	    "bare boolean");
	tap_ok(spec_from_args(&s, 2, unknown, &err) == POLICY_EINPUT &&
	    strstr(err.msg, "no-such-flag") != NULL,
	    "an unknown flag is an error: %s", err.msg);
	tap_ok(spec_from_args(&s, 1, missing, &err) == POLICY_EINPUT,
	    "a flag without its value is an error: %s", err.msg);
	tap_ok(spec_from_args(&s, 1, fileonly, &err) == POLICY_EINPUT,
	    "--log without a value is an error: %s", err.msg);
	spec_free(&s);
}

/* Write a policy file into tmpdir with the given mode. */
static const char *
policy_file(const char *name, const char *text, mode_t mode)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	unlink(path);
	if ((f = fopen(path, "w")) == NULL)
		return path;
	fputs(text, f);
	fclose(f);
	chmod(path, mode);
	return path;
}

struct badfile {
	const char	*text;
	const char	*want;		/* in the message */
};

static void
test_policy_file(void)
{
	static const struct badfile bad[] = {
		{ "{\"key_rate\": \"5\"}", "key_rate" },
		{ "{\"idle_timeout\": 1.5}", "idle_timeout" },
		{ "{\"no_such_key\": 1}", "no_such_key" },
		{ "{\"key_rate\": 5, \"key_rate\": 6}", "key_rate" },
		{ "{\"backend\": \"http://127.0.0.1/\"}", "backend" },
		{ "{\"log\": \"/tmp/x\"}", "log" },
		{ "{\"key_rate\": 1000}", "key_rate" },
		{ "{\"observer\": \"yes\"}", "observer" },
		{ "{\"network_capture\": true}", "network_capture" },
		{ "{\"ws_origins\": \"https://a.example\"}", "ws_origins" },
		{ "{\"watermark\": \"off\"}", "watermark" },
		{ "{\"watermark_opacity\": 0.7}", "watermark_opacity" },
		{ "{\"watermark_text\": \"%r %x\"}", "watermark_text" },
		{ "[1, 2]", "object" },
		{ "{\"key_rate\": 5,\n \"key_burst\": }", ":2:" },
		{ "", "" },
	};
	struct session_spec s;
	struct policy_error err;
	const char *path;
	char *args[4];
	size_t i;

	memset(&s, 0, sizeof(s));
	spec_init(&s, &err);
	path = policy_file("good.json", "{\"key_rate\": 8, \"key_burst\": 16, "
	    "\"idle_timeout\": 900, \"observer\": true, \"geometry\": "
	    "\"1600x900\", \"ws_origins\": [\"https://gw.example.org\"], "
	    "\"network_capture\": \"pcapng\"}", 0600);
	tap_ok(spec_load_file(&s, path, &err) == POLICY_OK && s.key_rate == 8 &&
	    s.key_burst == 16 && s.idle_timeout == 900 && s.observer == 1 &&
	    s.width == 1600 && s.ws_origins != NULL && s.ws_origins[0] != NULL &&
	    strcmp(s.ws_origins[0], "https://gw.example.org") == 0 &&
	    s.ws_origins[1] == NULL && s.network_capture != NULL &&
	    strcmp(s.network_capture, "pcapng") == 0,
	    "a good policy file is applied (%s)",
	    err.msg);
	spec_free(&s);

	/* The command line overrides the file wherever --policy stands. */
	memset(&s, 0, sizeof(s));
	spec_init(&s, &err);
	args[0] = "--key-rate";
	args[1] = "3";
	args[2] = "--policy";
	args[3] = (char *)path;
	tap_ok(spec_from_args(&s, 4, args, &err) == POLICY_OK &&
	    s.key_rate == 3 && s.key_burst == 16,
	    "precedence: default < policy file < command line (%s)", err.msg);
	spec_free(&s);
	spec_init(&s, &err);
	err.msg[0] = '\0';
	path = policy_file("wm.json", "{\"watermark\": false, "
	    "\"watermark_text\": \"%r 100%% %t\", \"watermark_opacity\": "
	    "0.3, \"watermark_layout\": \"corner\"}", 0600);
	tap_ok(spec_load_file(&s, path, &err) == POLICY_OK && s.watermark == 0 &&
	    strcmp(s.watermark_text, "%r 100%% %t") == 0 &&
	    s.watermark_opacity == 0.3 &&
	    strcmp(s.watermark_layout, "corner") == 0,
	    "watermark keys from a policy file (%s)", err.msg);
	spec_free(&s);

	for (i = 0; i < NELEM(bad); i++) {
		memset(&s, 0, sizeof(s));
		spec_init(&s, &err);
		err.msg[0] = '\0';
		path = policy_file("bad.json", bad[i].text, 0600);
		tap_ok(spec_load_file(&s, path, &err) == POLICY_EINPUT &&
		    strstr(err.msg, bad[i].want) != NULL &&
		    strstr(err.msg, "bad.json") != NULL,
		    "policy file %.40s refused: %s", bad[i].text, err.msg);
		spec_free(&s);
	}

	memset(&s, 0, sizeof(s));
	spec_init(&s, &err);
	path = policy_file("open.json", "{\"key_rate\": 8}", 0666);
	tap_ok(spec_load_file(&s, path, &err) == POLICY_EPERM,
	    "a world-writable policy file is refused: %s", err.msg);
	path = policy_file("group.json", "{\"key_rate\": 8}", 0620);
	tap_ok(spec_load_file(&s, path, &err) == POLICY_EPERM,
	    "a group-writable policy file is refused: %s", err.msg);
	tap_ok(spec_load_file(&s, "/nonexistent/p.json", &err) == POLICY_EIO,
	    "a missing policy file is an I/O error: %s", err.msg);
	tap_ok(s.key_rate == 10, "refused files changed nothing");
	spec_free(&s);
}

static void
test_url_listen(void)
{
	struct spec_url u;
	struct spec_listen l;
	struct policy_error err;

	tap_ok(spec_url_parse("http://127.0.0.1:8099/app?x=1", &u, &err) ==
	    POLICY_OK && strcmp(u.scheme, "http") == 0 &&
	    strcmp(u.host, "127.0.0.1") == 0 && u.host_is_ip && u.port == 8099 &&
	    strcmp(u.origin, "http://127.0.0.1:8099") == 0,
	    "URL with an IPv4 host and port (origin %s)", u.origin);
	tap_ok(spec_url_parse("HTTPS://App.Example.ORG/", &u, &err) ==
	    POLICY_OK && strcmp(u.scheme, "https") == 0 &&
	    strcmp(u.host, "app.example.org") == 0 && !u.host_is_ip &&
	    u.port == 443, "DNS name lower-cased, default port 443");
	tap_ok(spec_url_parse("http://[::1]:8080/", &u, &err) == POLICY_OK &&
	    strcmp(u.host, "::1") == 0 && u.host_is_ip && u.port == 8080,
	    "bracketed IPv6 host");
	tap_ok(spec_listen_parse("127.0.0.1:0", &l, &err) == POLICY_OK &&
	    l.port == 0 && strcmp(l.addr, "127.0.0.1") == 0,
	    "listen 127.0.0.1:0 (any free port)");
	tap_ok(spec_listen_parse("[::1]:5900", &l, &err) == POLICY_OK &&
	    l.port == 5900 && strcmp(l.addr, "::1") == 0, "listen [::1]:5900");
}

/* ---- chromium: the managed policy ---- */

/* The kiosk's required keys, every one required. */
static const char *const gateway_md_keys[] = {
	"URLBlocklist", "URLAllowlist", "DeveloperToolsAvailability",
	"DownloadRestrictions", "AllowFileSelectionDialogs",
	"PrintingEnabled", "IncognitoModeAvailability",
	"BrowserGuestModeEnabled", "BrowserAddPersonEnabled",
	"DefaultPopupsSetting", "ExtensionInstallBlocklist",
	"DefaultClipboardSetting", "AudioCaptureAllowed",
	"VideoCaptureAllowed", "ScreenCaptureAllowed",
	"DefaultWebUsbGuardSetting", "DefaultSerialGuardSetting",
	"DefaultWebHidGuardSetting", "DefaultWebBluetoothGuardSetting",
	"DefaultFileSystemReadGuardSetting",
	"DefaultFileSystemWriteGuardSetting", "PasswordManagerEnabled",
	"SavingBrowserHistoryDisabled", "TaskManagerEndProcessEnabled",
	"HomepageLocation", "NewTabPageLocation", "RestoreOnStartup",
	"TranslateEnabled", "MetricsReportingEnabled", "WebRtcIPHandling",
};

/* The values the kiosk needs (integers and booleans). */
struct want {
	const char	*key;
	int		 is_bool;
	int		 value;
};

static void
test_chromium_values(json_t *p)
{
	static const struct want want[] = {
		{ "DeveloperToolsAvailability", 0, 2 },
		{ "DownloadRestrictions", 0, 3 },
		{ "AllowFileSelectionDialogs", 1, 0 },
		{ "PrintingEnabled", 1, 0 },
		{ "IncognitoModeAvailability", 0, 1 },
		{ "BrowserGuestModeEnabled", 1, 0 },
		{ "BrowserAddPersonEnabled", 1, 0 },
		{ "DefaultPopupsSetting", 0, 2 },
		{ "DefaultClipboardSetting", 0, 2 },
		{ "AudioCaptureAllowed", 1, 0 },
		{ "VideoCaptureAllowed", 1, 0 },
		{ "ScreenCaptureAllowed", 1, 0 },
		{ "DefaultWebUsbGuardSetting", 0, 2 },
		{ "DefaultSerialGuardSetting", 0, 2 },
		{ "DefaultWebHidGuardSetting", 0, 2 },
		{ "DefaultWebBluetoothGuardSetting", 0, 2 },
		{ "DefaultFileSystemReadGuardSetting", 0, 2 },
		{ "DefaultFileSystemWriteGuardSetting", 0, 2 },
		{ "PasswordManagerEnabled", 1, 0 },
		{ "SavingBrowserHistoryDisabled", 1, 1 },
		{ "TaskManagerEndProcessEnabled", 1, 0 },
		{ "TranslateEnabled", 1, 0 },
		{ "MetricsReportingEnabled", 1, 0 },
		{ "RestoreOnStartup", 0, 4 },
	};
	json_t *v, *ext;
	size_t i;
	int bad = 0;

	for (i = 0; i < NELEM(want); i++) {
		v = json_object_get(p, want[i].key);
		if (want[i].is_bool ? !json_is_boolean(v) ||
		    json_is_true(v) != want[i].value : !json_is_integer(v) ||
		    json_integer_value(v) != want[i].value) {
			tap_diag("%s has the wrong value or type", want[i].key);
			bad++;
		}
	}
	tap_ok(bad == 0, "%zu keys carry the kiosk's values", NELEM(want));
	v = json_object_get(p, "WebRtcIPHandling");
	tap_ok(json_is_string(v) && strcmp(json_string_value(v),
	    "disable_non_proxied_udp") == 0,
	    "WebRtcIPHandling is disable_non_proxied_udp");
	ext = json_object_get(p, "ExtensionInstallBlocklist");
	tap_ok(json_is_array(ext) && json_array_size(ext) == 1 &&
	    strcmp(json_string_value(json_array_get(ext, 0)), "*") == 0,
	    "ExtensionInstallBlocklist is [\"*\"]");
}

static int
list_has(json_t *a, const char *s)
{
	size_t i;
	json_t *v;

	json_array_foreach(a, i, v)
		if (json_is_string(v) && strcmp(json_string_value(v), s) == 0)
			return 1;
	return 0;
}

/* Every string anywhere in the policy that names a URL is the backend
 * or its allow filter: nothing else is let in or pointed at. */
static int
only_backend_urls(json_t *v, const char *backend, const char *allow)
{
	const char *key, *s;
	json_t *x;
	size_t i;
	int bad = 0;

	if (json_is_object(v)) {
		json_object_foreach(v, key, x)
			if (strcmp(key, "URLBlocklist") != 0)
				bad += only_backend_urls(x, backend, allow);
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, x)
			bad += only_backend_urls(x, backend, allow);
	} else if (json_is_string(v)) {
		s = json_string_value(v);
		if (strstr(s, "://") != NULL && strcmp(s, backend) != 0 &&
		    strcmp(s, allow) != 0) {
			tap_diag("unexpected URL in the policy: %s", s);
			bad++;
		}
	}
	return bad;
}

static void
test_chromium_build(const char *backend, const char *allow)
{
	static const char *const blocked[] = { "*", "chrome://*",
	    "file://*", "view-source:*", "devtools://*", "javascript:*",
	    "chrome-untrusted://*", "chrome-extension://*" };
	struct policy_error err;
	json_t *p = NULL, *a;
	size_t i;
	int missing = 0;

	tap_ok(chromium_policy_build(backend, &p, &err) == POLICY_OK &&
	    json_is_object(p), "chromium_policy_build(%s)", backend);
	if (p == NULL)
		return;
	for (i = 0; i < NELEM(gateway_md_keys); i++)
		if (json_object_get(p, gateway_md_keys[i]) == NULL) {
			tap_diag("missing key %s", gateway_md_keys[i]);
			missing++;
		}
	tap_ok(missing == 0, "all %zu keys the kiosk needs are present",
	    NELEM(gateway_md_keys));
	tap_ok(json_object_size(p) == chromium_npolicies,
	    "the JSON has exactly the table's %zu keys", chromium_npolicies);
	a = json_object_get(p, "URLBlocklist");
	missing = 0;
	for (i = 0; i < NELEM(blocked); i++)
		missing += !list_has(a, blocked[i]);
	tap_ok(missing == 0, "URLBlocklist has *, chrome://*, file://*, "
	    "view-source:*, devtools://*, javascript:* and more");
	a = json_object_get(p, "URLAllowlist");
	tap_ok(json_is_array(a) && json_array_size(a) == 1 && list_has(a, allow),
	    "URLAllowlist is exactly [\"%s\"]", allow);
	tap_ok(only_backend_urls(p, backend, allow) == 0,
	    "no other URL anywhere in the policy");
	tap_ok(json_is_string(json_object_get(p, "HomepageLocation")) &&
	    strcmp(json_string_value(json_object_get(p, "HomepageLocation")),
	    backend) == 0 && list_has(json_object_get(p, "RestoreOnStartupURLs"),
	    backend), "home page and start-up URL are the backend");
	if (strstr(backend, "127.0.0.1") != NULL)
		test_chromium_values(p);
	json_decref(p);
}

static void
test_chromium_table(void)
{
	size_t i;
	int bad = 0;

	for (i = 0; i < chromium_npolicies; i++)
		if (chromium_policies[i].key == NULL ||
		    chromium_policies[i].why == NULL ||
		    chromium_policies[i].why[0] == '\0')
			bad++;
	tap_ok(bad == 0, "every one of the %zu policy entries says why",
	    chromium_npolicies);
}

static void
test_chromium_bad(void)
{
	static const char *const bad[] = { "file:///etc/passwd",
	    "chrome://settings", "javascript:alert(1)", "http://127.1/",
	    "http://u:p@127.0.0.1/", "", "http://exa mple.org/" };
	struct policy_error err;
	json_t *p;
	size_t i;

	for (i = 0; i < NELEM(bad); i++) {
		p = NULL;
		tap_ok(chromium_policy_build(bad[i], &p, &err) == POLICY_EINPUT &&
		    p == NULL, "backend '%s' refused: %s", bad[i], err.msg);
	}
}

static void
test_chromium_write(void)
{
	struct policy_error err;
	struct stat st;
	char path[300];
	json_t *j;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, CHROMIUM_POLICY_FILE);
	unlink(path);
	tap_ok(chromium_policy_write(tmpdir, "http://127.0.0.1:8099/", &err) ==
	    POLICY_OK, "chromium_policy_write (%s)", err.msg);
	tap_ok(stat(path, &st) == 0 && (st.st_mode & 07777) == 0644,
	    "the policy file is mode 0644 (%o)", (unsigned)(st.st_mode & 07777));
	j = json_load_file(path, 0, NULL);
	tap_ok(j != NULL && json_object_size(j) == chromium_npolicies,
	    "the file is the policy JSON");
	json_decref(j);
	tap_ok(chromium_policy_write(tmpdir, "http://127.0.0.1:8099/", &err) !=
	    POLICY_OK, "an existing policy file is not overwritten: %s",
	    err.msg);
	unlink(path);
}

int
main(void)
{
	static const char *const made[] = { "good.json", "bad.json",
	    "open.json", "group.json" };
	char path[300];
	size_t i;

	if (mkdtemp(tmpdir) == NULL)
		tap_skip_all("mkdtemp failed");
	test_table();
	test_defaults();
	test_bounds();
	test_bad_values();
	test_find_and_args();
	test_policy_file();
	test_url_listen();
	test_chromium_table();
	test_chromium_build("http://127.0.0.1:8099/", "http://127.0.0.1:8099");
	test_chromium_build("https://app.example.org/x",
	    "https://.app.example.org:443");
	test_chromium_build("http://[::1]:8080/", "http://[::1]:8080");
	test_chromium_bad();
	test_chromium_write();
	for (i = 0; i < NELEM(made); i++) {
		snprintf(path, sizeof(path), "%s/%s", tmpdir, made[i]);
		unlink(path);
	}
	rmdir(tmpdir);
	return tap_done();
}
