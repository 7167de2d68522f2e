/*
 * record/png.c — one framebuffer as a PNG file, for `replay --frame`.
 *
 * Hand-made with zlib instead of libpng: zlib is already linked for the
 * chunk CRCs, an 8-bit RGB PNG is three chunks (IHDR, IDAT, IEND) with
 * filter byte 0 per row, and libpng's setjmp/longjmp error handling does
 * not fit a library that returns status codes.  Output only: nothing here
 * parses untrusted input.
 *
 * Library code.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "record/record-int.h"

/* length, type, data, CRC over type + data */
static int
png_chunk(int fd, const char *type, const uint8_t *data, size_t n)
{
	uint8_t hdr[8], crc[4];
	uLong c;

	record_put_u32(hdr, (uint32_t)n);
	memcpy(hdr + 4, type, 4);
	c = crc32(crc32(0, NULL, 0), hdr + 4, 4);
	if (n > 0)
		c = crc32(c, data, (uInt)n);
	record_put_u32(crc, (uint32_t)c);
	if (record_write_all(fd, hdr, 8) ||
	    (n > 0 && record_write_all(fd, data, n)) ||
	    record_write_all(fd, crc, 4))
		return RECORD_EIO;
	return RECORD_OK;
}

int
record_png_write(int fd, const uint8_t *rgb, uint32_t width, uint32_t height)
{
	static const uint8_t sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a,
	    '\n' };
	uint8_t ihdr[13] = { 0 };
	size_t row = (size_t)width * 3, rawlen = (row + 1) * height, y;
	uint8_t *raw = NULL, *z = NULL;
	uLongf zlen;
	int rc = RECORD_ENOMEM;

	if (width == 0 || height == 0 || width > RECORD_MAX_WIDTH ||
	    height > RECORD_MAX_HEIGHT)
		return RECORD_EINVAL;
	zlen = compressBound((uLong)rawlen);
	if ((raw = malloc(rawlen)) == NULL || (z = malloc(zlen)) == NULL)
		goto out;
	for (y = 0; y < height; y++) {
		raw[y * (row + 1)] = 0;		/* filter: none */
		memcpy(raw + y * (row + 1) + 1, rgb + y * row, row);
	}
	if (compress2(z, &zlen, raw, (uLong)rawlen, 6) != Z_OK)
		goto out;
	record_put_u32(ihdr, width);
	record_put_u32(ihdr + 4, height);
	ihdr[8] = 8;		/* bit depth */
	ihdr[9] = 2;		/* colour type: RGB */
	rc = RECORD_EIO;
	if (record_write_all(fd, sig, 8) || png_chunk(fd, "IHDR", ihdr, 13) ||
	    png_chunk(fd, "IDAT", z, zlen) || png_chunk(fd, "IEND", NULL, 0))
		goto out;
	rc = RECORD_OK;
out:
	free(raw);
	free(z);
	return rc;
}
