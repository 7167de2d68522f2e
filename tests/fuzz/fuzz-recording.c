/*
 * tests/fuzz/fuzz-recording.c — libFuzzer target for the recording
 * reader: any file must open or be refused with a status, and every seek
 * and item read on what opened must return a status — never a crash, an
 * overread, an oversized allocation or a hang.  The input is written to
 * a temporary file because the reader works with pread on a path.
 * The first input byte is a mode, the rest the file: when the mode is
 * odd the chunk CRCs are recomputed first, so the
 * fuzzer also reaches the payload decoders (rects, zstd, index) that a
 * forger who knows the format could feed us.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "record/record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Walk the chunk lengths and rewrite every complete chunk's CRC-32. */
static void
fix_crcs(uint8_t *d, size_t n)
{
	size_t i = 0, len;
	uLong c;

	while (i + 20 <= n) {
		len = (size_t)d[i + 4] << 24 | (size_t)d[i + 5] << 16 |
		    (size_t)d[i + 6] << 8 | d[i + 7];
		if (len > n - i - 20)
			break;
		c = crc32(crc32(0, NULL, 0), d + i, (uInt)(16 + len));
		d[i + 16 + len] = (uint8_t)(c >> 24);
		d[i + 17 + len] = (uint8_t)(c >> 16);
		d[i + 18 + len] = (uint8_t)(c >> 8);
		d[i + 19 + len] = (uint8_t)c;
		i += 20 + len;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = NULL, mode;
	static char path[64];
	struct record_reader *r;
	struct record_item it;
	const struct record_info *in;
	char err[256];
	size_t i;
	int fd;

	if (path[0] == '\0')
		snprintf(path, sizeof(path), "/tmp/fuzz-recording.%ld",
		    (long)getpid());
	if (size == 0)
		return 0;
	mode = data[0];
	data++;
	size--;
	if ((mode & 1) && size > 0 && (copy = malloc(size)) != NULL) {
		memcpy(copy, data, size);
		fix_crcs(copy, size);
		data = copy;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd == -1 || record_write_all(fd, data, size) != RECORD_OK) {
		if (fd != -1)
			close(fd);
		free(copy);
		return 0;
	}
	close(fd);
	free(copy);
	if (record_reader_open(path, &r, err, sizeof(err)) != RECORD_OK)
		return 0;
	in = record_reader_info(r);
	for (i = 0; i < record_reader_nchunks(r); i++)
		(void)record_reader_item(r, i, &it);
	(void)record_reader_seek(r, in->duration_us);
	(void)record_reader_seek(r, 0);
	(void)record_reader_seek(r, in->duration_us / 2);
	record_reader_free(r);
	return 0;
}
