/*
 * tests/unit/test-digest.c — common/digest.c against known SHA-256
 * vectors (FIPS 180-2's "", "abc" and the two-block message), the
 * incremental form against the one-shot one, and a 1 MiB file against
 * the sha256sum program.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/digest.h"
#include "tests/tap.h"

#define EMPTY	"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define ABC	"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
#define TWO_IN	"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
#define TWO	"248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
#define MIB	(1024 * 1024)

/* One buffer, raw and hex. */
static void
test_vectors(void)
{
	char hex[DIGEST_HEX_SIZE], hex2[DIGEST_HEX_SIZE];
	uint8_t md[DIGEST_LEN];

	tap_ok(digest_buf_hex("", 0, hex) == DIGEST_OK &&
	    strcmp(hex, EMPTY) == 0, "sha256(\"\") = %s", hex);
	tap_ok(digest_buf_hex("abc", 3, hex) == DIGEST_OK &&
	    strcmp(hex, ABC) == 0, "sha256(\"abc\") = %s", hex);
	tap_ok(digest_buf_hex(TWO_IN, strlen(TWO_IN), hex) == DIGEST_OK &&
	    strcmp(hex, TWO) == 0, "sha256(two-block message) = %s", hex);
	tap_ok(digest_buf("abc", 3, md) == DIGEST_OK, "raw form");
	digest_to_hex(md, hex2);
	tap_ok(strcmp(hex2, ABC) == 0 && md[0] == 0xba && md[31] == 0xad,
	    "raw bytes agree with the hex form");
}

/* The stream form in uneven pieces equals the one-shot digest; a
 * finished context refuses more. */
static void
test_stream(void)
{
	struct digest *d = digest_alloc();
	char hex[DIGEST_HEX_SIZE];
	size_t i, n = strlen(TWO_IN);
	int ok = d != NULL;

	for (i = 0; ok && i < n; i += 7)
		ok = digest_update(d, TWO_IN + i, n - i < 7 ? n - i : 7) ==
		    DIGEST_OK;
	tap_ok(ok && digest_update(d, "", 0) == DIGEST_OK,
	    "updates in 7-byte pieces (and an empty one)");
	tap_ok(digest_final_hex(d, hex) == DIGEST_OK && strcmp(hex, TWO) == 0,
	    "incremental = one-shot (%s)", hex);
	tap_ok(digest_update(d, "x", 1) == DIGEST_EINVAL,
	    "update after final: DIGEST_EINVAL");
	tap_ok(digest_final_hex(d, hex) == DIGEST_EINVAL && hex[0] == '\0',
	    "a second final: DIGEST_EINVAL and no digest");
	digest_free(d);
	digest_free(NULL);
	tap_ok(strcmp(digest_strerror(DIGEST_EIO), "read error") == 0 &&
	    digest_strerror(99) != NULL, "digest_strerror");
}

/* What sha256sum says about path, or "" if it cannot run. */
static void
sha256sum(const char *path, char want[DIGEST_HEX_SIZE])
{
	char cmd[512], line[256];
	FILE *p;

	want[0] = '\0';
	snprintf(cmd, sizeof(cmd), "sha256sum '%s'", path);
	if ((p = popen(cmd, "r")) == NULL)
		return;
	if (fgets(line, sizeof(line), p) != NULL && strlen(line) > 64 &&
	    line[64] == ' ') {
		memcpy(want, line, 64);
		want[64] = '\0';
	}
	pclose(p);
}

/* A 1 MiB file of non-repeating bytes (16 reads of 64 KiB) by fd and by
 * path, against sha256sum; then the errors. */
static void
test_file(void)
{
	char path[] = "/tmp/test-digest-XXXXXX", want[DIGEST_HEX_SIZE];
	char hex[DIGEST_HEX_SIZE], hex2[DIGEST_HEX_SIZE];
	uint8_t *b = malloc(MIB);
	size_t i;
	int fd = mkstemp(path);

	if (b == NULL || fd < 0) {
		tap_ok(0, "temporary file: %s", strerror(errno));
		free(b);
		return;
	}
	for (i = 0; i < MIB; i++)
		b[i] = (uint8_t)((i * 2654435761u) >> 13);
	tap_ok(write(fd, b, MIB) == MIB, "wrote 1 MiB");
	sha256sum(path, want);
	tap_ok(want[0] != '\0', "sha256sum ran on the file");
	tap_ok(lseek(fd, 0, SEEK_SET) == 0 &&
	    digest_fd_hex(fd, hex) == DIGEST_OK && strcmp(hex, want) == 0,
	    "digest_fd_hex = sha256sum (%.16s...)", want);
	tap_ok(digest_file_hex(path, hex2) == DIGEST_OK &&
	    strcmp(hex2, want) == 0, "digest_file_hex = sha256sum");
	tap_ok(digest_buf_hex(b, MIB, hex) == DIGEST_OK &&
	    strcmp(hex, want) == 0, "digest_buf_hex of the same bytes agrees");
	tap_ok(lseek(fd, MIB - 3, SEEK_SET) == MIB - 3 &&
	    digest_fd_hex(fd, hex) == DIGEST_OK &&
	    digest_buf_hex(b + MIB - 3, 3, hex2) == DIGEST_OK &&
	    strcmp(hex, hex2) == 0, "digest_fd starts at the fd's offset");
	close(fd);
	unlink(path);
	errno = 0;
	tap_ok(digest_file_hex(path, hex) == DIGEST_EIO && errno == ENOENT &&
	    hex[0] == '\0', "a missing file: DIGEST_EIO, errno ENOENT, no hex");
	tap_ok(digest_fd_hex(-1, hex) == DIGEST_EIO && errno == EBADF &&
	    hex[0] == '\0', "a bad fd: DIGEST_EIO, errno EBADF");
	tap_ok(digest_file_hex("/", hex) == DIGEST_EIO && errno == EISDIR,
	    "a directory: DIGEST_EIO (EISDIR)");
	free(b);
}

int
main(void)
{
	test_vectors();
	test_stream();
	test_file();
	return tap_done();
}
