/*
 * tests/unit/test-config.c — policy/config.c: the serve configuration's
 * option table and its strict reader, on real files.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/config.h"
#include "tests/tap.h"

static char dir[] = "/tmp/test-config.XXXXXX";

#define BASE	"\"backend_url\": \"http://127.0.0.1:8080/\""

/* Write {BASE, extra} to a file of the given mode; load it. */
static int
load(const char *extra, mode_t mode, struct gw_config *c,
    struct policy_error *e)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/c.json", dir);
	unlink(path);
	if ((f = fopen(path, "w")) == NULL)
		return -1;
	if (extra[0] == '{' || extra[0] == '[')	/* a whole document */
		fprintf(f, "%s\n", extra);
	else if (strstr(extra, "backend_url") != NULL)	/* replaces BASE */
		fprintf(f, "{%s}\n", extra);
	else
		fprintf(f, "{" BASE "%s%s}\n", extra[0] ? ", " : "", extra);
	fclose(f);
	chmod(path, mode);
	return config_load(c, path, e);
}

/* Loading {BASE, extra} fails and the message names want. */
static void
refused(const char *extra, const char *want)
{
	static struct gw_config c;
	struct policy_error e = { "" };
	int r = load(extra, 0644, &c, &e);

	tap_ok(r != POLICY_OK && strstr(e.msg, want) != NULL,
	    "refused: %.60s (%s)", extra, e.msg);
}

static void
table(void)
{
	size_t i, j;
	int ok = 1;

	for (i = 0; i < config_noptions; i++) {
		const struct config_option *o = &config_options[i];

		if (o->help == NULL || o->help[0] == '\0')
			ok = 0;
		for (j = i + 1; j < config_noptions; j++)
			if (strcmp(o->name, config_options[j].name) == 0)
				ok = 0;
	}
	tap_ok(ok, "every option has help and a unique name (%zu options)",
	    config_noptions);
}

int
main(void)
{
	static struct gw_config c;
	struct policy_error e;

	if (mkdtemp(dir) == NULL)
		tap_skip_all("mkdtemp failed");
	table();
	tap_ok(load("", 0644, &c, &e) == POLICY_OK, "the minimal config "
	    "loads");
	tap_ok(strcmp(c.session_address, "127.0.0.1") == 0 &&
	    c.port_lo == 40000 && c.port_hi == 40099 &&
	    c.session_expires_default == 3600 &&
	    c.session_expires_max == 604800 && c.tls_cert[0] == '\0',
	    "defaults: 127.0.0.1, 40000-40099, 3600 s, 7 days, no TLS");
	tap_ok(load("\"session_ports\": \"5000-5000\", "
	    "\"session_address\": \"::1\"", 0644, &c, &e) == POLICY_OK &&
	    c.port_lo == 5000 && c.port_hi == 5000, "one port, IPv6 address");
	tap_ok(load("", 0664, &c, &e) == POLICY_EPERM &&
	    strstr(e.msg, "group/world-writable") != NULL,
	    "a group-writable file is refused");
	tap_ok(load("", 0646, &c, &e) == POLICY_EPERM,
	    "a world-writable file is refused");
	refused("\"nope\": 1", "unknown key");
	refused("\"socket\": 5", "wants a string");
	refused("\"session_idle_timeout\": \"5\"", "wants an integer");
	refused("\"session_idle_timeout\": 1.5", "wants an integer");
	refused("\"session_expires_max\": 0", "out of range");
	refused("\"session_expires_max\": 604801", "out of range");
	refused("\"session_expires_default\": 7200, "
	    "\"session_expires_max\": 3600", "exceeds");
	refused("\"session_ports\": \"5-4\"", "LO-HI");
	refused("\"session_ports\": \"0-10\"", "LO-HI");
	refused("\"session_ports\": \"1-70000\"", "LO-HI");
	refused("\"session_ports\": \"100\"", "LO-HI");
	refused("\"session_ports\": \"a-b\"", "LO-HI");
	refused("\"session_ports\": \"10-20x\"", "LO-HI");
	refused("\"tls_cert\": \"/x.pem\"", "go together");
	refused("\"front_door_listen\": \"127.0.0.1:5900\"",
	    "needs tls_cert and tls_key");
	refused("\"tls_cert\": \"/x.pem\", \"tls_key\": \"/k.pem\", "
	    "\"front_door_listen\": \"gateway:5900\"",
	    "front_door_listen: 'gateway' is not a numeric");
	refused("\"tls_cert\": \"/x.pem\", \"tls_key\": \"/k.pem\", "
	    "\"front_door_listen\": \"127.0.0.1\"", "ADDR:PORT");
	refused("\"front_door_source\": \"node1\"",
	    "front_door_source: 'node1' is not a numeric");
	refused("\"session_runner\": \"slurm\", \"slurm_listen\": "
	    "\"10.0.0.1:7010\"", "needs front_door_listen and front_door_source");
	refused("\"session_runner\": \"slurm\", \"slurm_listen\": "
	    "\"10.0.0.1:7010\", \"tls_cert\": \"/x.pem\", \"tls_key\": "
	    "\"/k.pem\", \"front_door_listen\": \"10.0.0.1:5900\"",
	    "needs front_door_listen and front_door_source");
	refused("\"control_address\": \"10.0.0.1:7010\", "
	    "\"front_door_source\": \"127.0.0.1\"",
	    "a node (control_address) needs front_door_source");
	refused("\"control_address\": \"10.0.0.1:7010\", "
	    "\"front_door_source\": \"10.0.0.1\", \"tls_cert\": \"/x.pem\", "
	    "\"tls_key\": \"/k.pem\"", "a node (control_address) takes no tls_cert");
	refused("\"store\": \"\"", "empty");
	refused("\"session_address\": \"localhost\"", "");
	refused("\"backend_url\": \"ftp://x/\"", "");
	refused("{\"socket\": \"/s\"}", "backend_url is required");
	refused("[1, 2]", "a JSON object");
	refused("\"socket\": \"a\", \"socket\": \"b\"", "duplicate");
	{
		char big[CONFIG_STR_MAX + 64];

		snprintf(big, sizeof(big), "\"store\": \"/%0*d\"",
		    CONFIG_STR_MAX, 0);
		refused(big, "longer than");
	}
	tap_ok(config_load(&c, "/nonexistent/c.json", &e) != POLICY_OK,
	    "a missing file: %s", e.msg);
	{
		char p[128], l[128];

		snprintf(p, sizeof(p), "%s/c.json", dir);
		snprintf(l, sizeof(l), "%s/link.json", dir);
		load("", 0644, &c, &e);
		tap_ok(symlink(p, l) == 0 && config_load(&c, l, &e) ==
		    POLICY_EPERM, "a symbolic link is refused: %s", e.msg);
		unlink(l);
		unlink(p);
	}
	rmdir(dir);
	return tap_done();
}
