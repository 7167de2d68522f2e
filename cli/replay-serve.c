/*
 * cli/replay-serve.c — `cdsgate replay FILE --serve ADDR`: a read-only VNC
 * server that plays a recording to any VNC viewer.  Keys in the viewer
 * control playback (Space pause/resume, Left/Right -/+10 s, Down/Up
 * -/+1 min, Home/End start/end); pointer and clipboard are ignored.
 *
 * Runs as the invoking auditor.  The recording is untrusted and read only
 * through record/reader.c; viewers are untrusted and only ever send keys
 * here.  A recording shows what a researcher saw, so the server listens
 * on loopback only (reach it through an SSH tunnel) and requires a VNC
 * password: from --password-file, or a random one printed at start.
 * libvncserver is driven from this loop (rfbProcessEvents), no threads.
 * The CLI binds the listener and reads the password (replay_serve_listen);
 * the replay worker (cli/replay-worker.c), already under the replay
 * seccomp profile, is handed the listener and serves viewers on it
 * (replay_serve): it reads the recording it holds and can open nothing.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <rfb/rfb.h>
#include <rfb/keysym.h>

#include "cli/cli.h"
#include "cli/replay-serve.h"
#include "gateway/vncscreen.h"
#include "record/record.h"
#include "sandbox/confine.h"
#include "sandbox/sandbox.h"

struct player {
	struct record_reader	*r;
	rfbScreenInfoPtr	 s;
	uint64_t		 dur_us;
	uint64_t		 pos_us;	/* position when last (re)started */
	double			 ref;		/* wall clock at pos_us */
	int			 paused;
	uint64_t		 shown_us;	/* time on screen; UINT64_MAX none */
};

static volatile sig_atomic_t serve_stop;

static void
on_signal(int sig)
{
	(void)sig;
	serve_stop = 1;
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Where playback is now; stops (pauses) at the end. */
static uint64_t
play_time(struct player *p)
{
	double t;

	if (p->paused)
		return p->pos_us;
	t = p->pos_us + (now_s() - p->ref) * 1e6;
	if (t >= p->dur_us) {
		p->pos_us = p->dur_us;
		p->paused = 1;
		return p->dur_us;
	}
	return (uint64_t)t;
}

/* Viewer keys: the only input a viewer has; never reaches anything else. */
static void
serve_kbd(rfbBool down, rfbKeySym ks, rfbClientPtr cl)
{
	struct player *p = cl->screen->screenData;
	int64_t t = (int64_t)play_time(p), d = 0;

	if (!down)
		return;
	switch (ks) {
	case XK_space:	p->paused = !p->paused; break;
	case XK_Left:	d = -10000000; break;
	case XK_Right:	d = 10000000; break;
	case XK_Down:	d = -60000000; break;
	case XK_Up:	d = 60000000; break;
	case XK_Home:	t = 0; break;
	case XK_End:	t = (int64_t)p->dur_us; break;
	default:	return;
	}
	t += d;
	if (t < 0)
		t = 0;
	if (t > (int64_t)p->dur_us)
		t = (int64_t)p->dur_us;
	p->pos_us = (uint64_t)t;
	p->ref = now_s();
}

static void
serve_ptr(int mask, int x, int y, rfbClientPtr cl)
{
	(void)mask, (void)x, (void)y, (void)cl;	/* read-only */
}

static void
serve_cut(char *str, int len, rfbClientPtr cl)
{
	(void)str, (void)len, (void)cl;		/* read-only */
}

/* Bring the screen to the playback time; mark only the changed rows. */
static void
serve_frame(struct player *p)
{
	const struct record_header *h = record_reader_header(p->r);
	uint64_t t = play_time(p);
	size_t row = (size_t)h->width * 4, y, y0 = h->height, y1 = 0;
	const uint8_t *src;
	uint8_t *dst = (uint8_t *)p->s->frameBuffer;

	if (t == p->shown_us || record_reader_seek(p->r, t) != RECORD_OK)
		return;
	p->shown_us = t;
	src = (const uint8_t *)record_reader_fb(p->r);
	for (y = 0; y < h->height; y++)
		if (memcmp(dst + y * row, src + y * row, row) != 0) {
			memcpy(dst + y * row, src + y * row, row);
			if (y < y0)
				y0 = y;
			y1 = y + 1;
		}
	if (y1 > y0)
		rfbMarkRectAsModified(p->s, 0, (int)y0, h->width, (int)y1);
}

/* "127.0.0.1:5901" (loopback only) into address and port. */
static int
parse_addr(const char *s, in_addr_t *addr, int *port)
{
	char host[64];
	const char *c = strrchr(s, ':');
	struct in_addr a;
	double v;

	if (c == NULL || (size_t)(c - s) >= sizeof(host))
		return -1;
	memcpy(host, s, (size_t)(c - s));
	host[c - s] = '\0';
	if (inet_pton(AF_INET, host, &a) != 1 ||
	    (ntohl(a.s_addr) >> 24) != 127 ||
	    cli_parse_number(c + 1, &v) != 0 || v < 1 || v > 65535 ||
	    v != (int)v)
		return -1;
	*addr = a.s_addr;
	*port = (int)v;
	return 0;
}

/* First line of a file, or 8 random letters/digits printed for the user. */
static int
get_password(const char *file, char *pw, size_t len)
{
	static const char set[] = "abcdefghijkmnpqrstuvwxyz23456789";
	unsigned char rnd[8];
	FILE *f;
	size_t i;

	if (file != NULL) {
		if ((f = fopen(file, "r")) == NULL)
			return -1;
		if (fgets(pw, (int)len, f) == NULL)
			pw[0] = '\0';
		fclose(f);
		pw[strcspn(pw, "\r\n")] = '\0';
		return pw[0] == '\0' ? -1 : 0;
	}
	if ((f = fopen("/dev/urandom", "r")) == NULL ||
	    fread(rnd, 1, sizeof(rnd), f) != sizeof(rnd)) {
		if (f != NULL)
			fclose(f);
		return -1;
	}
	fclose(f);
	for (i = 0; i < sizeof(rnd) && i + 1 < len; i++)
		pw[i] = set[rnd[i] % (sizeof(set) - 1)];
	pw[i] = '\0';
	return 1;
}

static rfbScreenInfoPtr
serve_screen(struct player *p, int listen_fd, char **passwords)
{
	const struct record_header *h = record_reader_header(p->r);
	rfbScreenInfoPtr s;

	s = vnc_screen_new("cdsgate replay", h->width, h->height,
	    h->red_shift, h->green_shift, h->blue_shift, p);
	if (s == NULL)
		return NULL;
	s->frameBuffer = calloc(1, (size_t)h->width * h->height * 4);
	s->authPasswdData = passwords;
	s->passwordCheck = rfbCheckPasswordByList;
	s->kbdAddEvent = serve_kbd;
	s->ptrAddEvent = serve_ptr;
	s->setXCutText = serve_cut;
	s->cursor = NULL;	/* the pointer is in the recorded frames */
	if (s->frameBuffer == NULL) {
		rfbScreenCleanup(s);
		return NULL;
	}
	rfbInitServer(s);	/* port 0: the library binds nothing */
	s->listenSock = listen_fd;
	FD_SET(listen_fd, &s->allFds);
	if (listen_fd > s->maxFd)
		s->maxFd = listen_fd;
	return s;
}

int
replay_serve_listen(const char *addr, const char *pwfile, char *pw,
    size_t pwlen, int *generated)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int fd, one = 1, port;

	if (parse_addr(addr, &sa.sin_addr.s_addr, &port) != 0)
		return -cli_usage_error(NULL, "--serve needs 127.x.x.x:PORT "
		    "(loopback only; tunnel it for a remote viewer)");
	if ((*generated = get_password(pwfile, pw, pwlen)) < 0)
		return -cli_usage_error(NULL, "no password: %s",
		    pwfile != NULL ? pwfile : "/dev/urandom");
	sa.sin_port = htons((uint16_t)port);
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1 ||
	    listen(fd, 32) == -1) {
		fprintf(stderr, "cdsgate: cannot listen on %s: %s\n", addr,
		    strerror(errno));
		if (fd != -1)
			close(fd);
		explicit_bzero(pw, pwlen);
		return -EXIT_INTERNAL;
	}
	return fd;
}

int
replay_serve(struct record_reader *r, int listen_fd, const char *pw,
    int paused, uint64_t at_us, void (*ready)(void *), void *arg)
{
	struct player p = { .r = r, .shown_us = UINT64_MAX };
	char pwc[64], *passwords[2] = { pwc, NULL };

	snprintf(pwc, sizeof(pwc), "%s", pw);
	p.dur_us = record_reader_info(r)->duration_us;
	p.pos_us = paused ? at_us : 0;
	p.paused = paused;
	p.ref = now_s();
	rfbLogEnable(0);
	if ((p.s = serve_screen(&p, listen_fd, passwords)) == NULL) {
		fprintf(stderr, "cdsgate: replay: out of memory\n");
		close(listen_fd);
		return EXIT_INTERNAL;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	ready(arg);
	while (!serve_stop && rfbIsActive(p.s)) {
		serve_frame(&p);
		rfbProcessEvents(p.s, 40000);
	}
	rfbShutdownServer(p.s, TRUE);
	free(p.s->frameBuffer);
	rfbScreenCleanup(p.s);
	explicit_bzero(pwc, sizeof(pwc));
	return 0;
}
