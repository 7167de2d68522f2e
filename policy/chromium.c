/*
 * policy/chromium.c — the kiosk browser's managed policy, as a table.
 *
 * Library code (no logging, no exits); runs in the supervisor as root
 * and writes one small file.  The backend URL is operator input and is
 * re-validated here; nothing else in the output depends on input.
 *
 * No policy closes every way out (measured: ctrl+n, shift+Esc, alt+F4
 * are not policy-controlled); the worker's key allow-list and the
 * supervisor's browser restart cover what this cannot.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/chromium.h"

/*
 * "*" blocks every standard scheme, but not Chromium's own (measured:
 * chrome:// stays reachable), so each internal or local scheme is named.
 * about:blank is always allowed by Chromium and harmless.
 */
const char *const chromium_url_blocklist[] = {
	"*",
	"chrome://*",
	"chrome-untrusted://*",
	"chrome-extension://*",
	"chrome-search://*",
	"devtools://*",
	"file://*",
	"filesystem:*",
	"view-source:*",
	"javascript:*",
	NULL
};

static const char *const block_all[] = { "*", NULL };

#define B(k, v, why)	{ k, CHROMIUM_BOOL, v, NULL, NULL, why }
#define I(k, v, why)	{ k, CHROMIUM_INT, v, NULL, NULL, why }
#define S(k, v, why)	{ k, CHROMIUM_STRING, 0, v, NULL, why }
#define L(k, v, why)	{ k, CHROMIUM_LIST, 0, NULL, v, why }
#define APP(k, kind, why) { k, kind, 0, NULL, NULL, why }

/*
 * The policy.  Content settings use 2 = "block".  The first block is the
 * list the kiosk needs (all required); the second closes further side
 * channels and background traffic.
 */
const struct chromium_policy chromium_policies[] = {
	/* navigation: only the backend */
	L("URLBlocklist", chromium_url_blocklist,
	    "everything is blocked ..."),
	APP("URLAllowlist", CHROMIUM_APP_ALLOW,
	    "... except the backend's origin"),
	APP("HomepageLocation", CHROMIUM_APP_URL,
	    "every way home leads to the app"),
	B("HomepageIsNewTabPage", 0, "home is the app, not a new tab page"),
	APP("NewTabPageLocation", CHROMIUM_APP_URL,
	    "a new tab, if one opens, shows the app"),
	I("RestoreOnStartup", 4, "start with the URLs below ..."),
	APP("RestoreOnStartupURLs", CHROMIUM_APP_URL_LIST,
	    "... which is the app, also after a restart"),

	/* ways out of the page */
	I("DeveloperToolsAvailability", 2,
	    "devtools can run code and read everything"),
	I("DownloadRestrictions", 3, "no file may leave the backend"),
	B("AllowFileSelectionDialogs", 0,
	    "no file dialog (uploads, save-as) on the gateway's files"),
	B("PrintingEnabled", 0, "print-to-PDF writes files"),
	I("IncognitoModeAvailability", 1,
	    "an incognito window is a fresh, unwatched window"),
	B("BrowserGuestModeEnabled", 0, "no guest profile window"),
	B("BrowserAddPersonEnabled", 0, "no second profile"),
	I("DefaultPopupsSetting", 2, "no pop-up windows"),
	L("ExtensionInstallBlocklist", block_all, "no extensions"),
	B("TaskManagerEndProcessEnabled", 0,
	    "the task manager (shift+Esc) cannot kill the app's renderer"),

	/* data in and out besides the screen */
	I("DefaultClipboardSetting", 2,
	    "pages may not read the clipboard (async API)"),
	B("AudioCaptureAllowed", 0, "no microphone"),
	B("VideoCaptureAllowed", 0, "no camera"),
	B("ScreenCaptureAllowed", 0, "no screen sharing"),
	I("DefaultWebUsbGuardSetting", 2, "no WebUSB"),
	I("DefaultSerialGuardSetting", 2, "no Web Serial"),
	I("DefaultWebHidGuardSetting", 2, "no WebHID"),
	I("DefaultWebBluetoothGuardSetting", 2, "no Web Bluetooth"),
	I("DefaultFileSystemReadGuardSetting", 2,
	    "no File System Access reads"),
	I("DefaultFileSystemWriteGuardSetting", 2,
	    "no File System Access writes"),
	B("PasswordManagerEnabled", 0, "no credentials kept in the profile"),
	B("SavingBrowserHistoryDisabled", 1, "no history kept"),
	S("WebRtcIPHandling", "disable_non_proxied_udp",
	    "WebRTC may not open UDP paths around the allow-list"),

	/* background traffic and noise (measured) */
	B("TranslateEnabled", 0, "no page text sent to a translate service"),
	B("MetricsReportingEnabled", 0, "no usage reports"),

	/* further side channels and background traffic */
	I("DefaultNotificationsSetting", 2, "no desktop notifications"),
	I("DefaultGeolocationSetting", 2, "no location"),
	I("DefaultSensorsSetting", 2, "no device sensors"),
	I("DefaultWindowManagementSetting", 2,
	    "pages may not place windows on other screens"),
	B("AutofillAddressEnabled", 0, "no form data kept"),
	B("AutofillCreditCardEnabled", 0, "no form data kept"),
	B("SearchSuggestEnabled", 0, "no typed text sent to a search engine"),
	B("AlternateErrorPagesEnabled", 0,
	    "error pages do not ask a web service"),
	B("SpellCheckServiceEnabled", 0, "no typed text sent for spelling"),
	I("NetworkPredictionOptions", 2, "no preconnects or prefetches"),
	I("SafeBrowsingProtectionLevel", 0,
	    "no URL lookups at Google; only the backend is reachable anyway"),
	B("UrlKeyedAnonymizedDataCollectionEnabled", 0, "no URL reporting"),
	I("BrowserSignin", 0, "no browser sign-in"),
	B("SyncDisabled", 1, "no sync of anything anywhere"),
	B("BackgroundModeEnabled", 0, "nothing keeps running after exit"),
	B("BookmarkBarEnabled", 0, "no bookmark bar"),
	B("EditBookmarksEnabled", 0, "no bookmarks (URLs typed by hand)"),
	B("ShowHomeButton", 0, "no browser chrome beyond the page"),
	B("AllowDinosaurEasterEgg", 0, "no offline game"),
};
const size_t chromium_npolicies =
    sizeof(chromium_policies) / sizeof(chromium_policies[0]);

int
chromium_allow_filter(const struct spec_url *u, char *buf, size_t len,
    struct policy_error *err)
{
	int n;

	/* IPv6 literals keep their brackets; DNS names get the '.' that
	   switches subdomain matching off. */
	if (strchr(u->host, ':') != NULL)
		n = snprintf(buf, len, "%s://[%s]:%u", u->scheme, u->host,
		    u->port);
	else
		n = snprintf(buf, len, "%s://%s%s:%u", u->scheme,
		    u->host_is_ip ? "" : ".", u->host, u->port);
	if (n < 0 || (size_t)n >= len)
		return policy_error_set(err, POLICY_EINPUT,
		    "backend origin too long");
	return POLICY_OK;
}

static json_t *
str_list(const char *const *l)
{
	json_t *a = json_array();

	for (; *l != NULL; l++)
		json_array_append_new(a, json_string(*l));
	return a;
}

/* One table entry as a JSON value. */
static json_t *
policy_value(const struct chromium_policy *p, const char *backend,
    const char *allow)
{
	const char *one[2] = { NULL, NULL };

	switch (p->kind) {
	case CHROMIUM_BOOL:
		return json_boolean(p->i);
	case CHROMIUM_INT:
		return json_integer(p->i);
	case CHROMIUM_STRING:
		return json_string(p->s);
	case CHROMIUM_LIST:
		return str_list(p->list);
	case CHROMIUM_APP_URL:
		return json_string(backend);
	case CHROMIUM_APP_URL_LIST:
		one[0] = backend;
		return str_list(one);
	case CHROMIUM_APP_ALLOW:
		one[0] = allow;
		return str_list(one);
	}
	return NULL;
}

int
chromium_policy_build(const char *backend, json_t **out,
    struct policy_error *err)
{
	struct spec_url u;
	char allow[400];
	json_t *o, *v;
	size_t i;
	int r;

	*out = NULL;
	if ((r = spec_url_parse(backend, &u, err)) != POLICY_OK ||
	    (r = chromium_allow_filter(&u, allow, sizeof(allow), err)) !=
	    POLICY_OK)
		return r;
	if ((o = json_object()) == NULL)
		return policy_error_set(err, POLICY_ENOMEM, "out of memory");
	for (i = 0; i < chromium_npolicies; i++) {
		v = policy_value(&chromium_policies[i], backend, allow);
		if (v == NULL || json_object_set_new(o,
		    chromium_policies[i].key, v) != 0) {
			json_decref(o);
			return policy_error_set(err, POLICY_ENOMEM,
			    "out of memory");
		}
	}
	*out = o;
	return POLICY_OK;
}

/* Write all of buf to fd. */
static int
write_all(int fd, const char *buf, size_t len)
{
	ssize_t n;

	while (len > 0) {
		n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

int
chromium_policy_write(const char *dir, const char *backend,
    struct policy_error *err)
{
	json_t *o = NULL;
	char *text = NULL, path[4096];
	int fd = -1, r;

	if ((r = chromium_policy_build(backend, &o, err)) != POLICY_OK)
		return r;
	text = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	if (text == NULL) {
		r = policy_error_set(err, POLICY_ENOMEM, "out of memory");
		goto out;
	}
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir,
	    CHROMIUM_POLICY_FILE) >= sizeof(path)) {
		r = policy_error_set(err, POLICY_EINPUT, "%s: path too long",
		    dir);
		goto out;
	}
	/* O_EXCL|O_NOFOLLOW: never write through something planted. */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0644);
	if (fd < 0 || fchmod(fd, 0644) != 0 ||
	    write_all(fd, text, strlen(text)) != 0 ||
	    write_all(fd, "\n", 1) != 0) {
		r = policy_error_set(err, POLICY_EIO, "%s: %s", path,
		    strerror(errno));
		goto out;
	}
	if (close(fd) != 0) {
		fd = -1;
		r = policy_error_set(err, POLICY_EIO, "%s: %s", path,
		    strerror(errno));
		goto out;
	}
	fd = -1;
	r = POLICY_OK;
out:
	if (fd >= 0)
		close(fd);
	free(text);
	json_decref(o);
	return r;
}
