/*
 * tests/fuzz/fuzz-vencrypt.c — libFuzzer target for the front door's
 * handshake (gateway/vencrypt.c): the first byte picks the mode (native
 * RFB, ws://, wss://) and whether plain VNC is allowed; the rest is what
 * the client sends, over a real socketpair, while the state machine
 * runs: RFB version, security types, VeNCrypt version and subtype, the
 * TLS ClientHello, VeNCrypt Plain, the websocket request (answered as
 * the worker would) and frames.  Every step must end in a state, never
 * a crash, an overrun or a leak.
 */
#include "config.h"

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gateway/slog.h"
#include "gateway/vencrypt.h"
#include "tests/testcert.h"

#define FUZZ_ROUNDS	64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct tls_ctx	*tls;
static struct creds	*creds;
static struct tbucket	 bucket;
static uint64_t		 now_us = 1000000;

static uint64_t
fake_clock(void)
{
	return now_us;
}

static int
fuzz_init(void)
{
	struct policy_error e;
	char err[256];

	signal(SIGPIPE, SIG_IGN);
	slog_open("/dev/null", "fuzz", "tls");
	tbucket_init(&bucket, 1000000, 1000000, now_us);
	return testcert_tls(&tls, err, sizeof(err)) == 0 &&
	    creds_parse(&creds, "alice:pw1\n", 10, "fuzz", &e) == POLICY_OK;
}

/* Run the door until it closes, asks for the library or stops moving. */
static void
fuzz_run(struct vencrypt *c, int cfd)
{
	enum vencrypt_event ev;
	uint8_t sink[4096];
	int i;

	for (i = 0; i < FUZZ_ROUNDS; i++) {
		now_us += 1000;
		ev = vencrypt_handle(c, now_us);
		while (recv(cfd, sink, sizeof(sink), MSG_DONTWAIT) > 0)
			;
		if (ev == VENCRYPT_CLOSED || ev == VENCRYPT_NEED_INNER)
			return;
		if (ev == VENCRYPT_WS_REQUEST)
			vencrypt_ws_accept(c, now_us);	/* token and Origin ok */
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum vencrypt_mode modes[] = { VENCRYPT_MODE_RFB,
	    VENCRYPT_MODE_WS, VENCRYPT_MODE_WSS };
	static int ready = -1;
	struct vencrypt_params prm = { 0 };
	struct vencrypt *c = NULL;
	int sv[2];

	if (ready < 0)
		ready = fuzz_init();
	if (!ready || size < 1 || size > 60000 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) != 0)
		return 0;
	prm.tls = tls;
	prm.creds = creds;
	prm.inner_password = "innerpw";
	prm.allow_plain = data[0] & 1;
	prm.auth_bucket = &bucket;
	prm.clock = fake_clock;
	if (send(sv[0], data + 1, size - 1, MSG_DONTWAIT) < 0 ||
	    vencrypt_alloc(&c, sv[1], "fuzz", modes[(data[0] >> 1) % 3], &prm,
	    now_us) != 0) {
		close(sv[0]);
		close(sv[1]);
		return 0;
	}
	fuzz_run(c, sv[0]);
	vencrypt_free(c);	/* closes sv[1] */
	close(sv[0]);
	return 0;
}
