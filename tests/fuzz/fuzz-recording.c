/*
 * tests/fuzz/fuzz-recording.c — libFuzzer target for the recording
 * reader: any file must open or be refused with a status, and every seek
 * and item read on what opened must return a status — never a crash, an
 * overread, an oversized allocation or a hang.  The input is written to
 * a temporary file because the reader works with pread on a path.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "record/record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
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
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd == -1 || record_write_all(fd, data, size) != RECORD_OK) {
		if (fd != -1)
			close(fd);
		return 0;
	}
	close(fd);
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
