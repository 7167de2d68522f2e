/*
 * tests/fuzz/fuzz-ipc.c — libFuzzer target for the IPC receiver: any
 * datagram a hostile peer can send must be accepted as exactly one
 * permitted message of the right size, or refused with a status — never
 * a crash, an overread or a leaked descriptor.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/ipc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct ipc_type types[] = {
	{ 1, 8, 0, "small" },
	{ 2, 520, IPC_F_FD, "with-fd" },
	{ 3, 16392, 0, "chunk" },
	{ 4, 0, 0, "empty" },
};
static const struct ipc_proto proto = { types, 4 };

static int
accept_msg(void *ctx, struct ipc_msg *m)
{
	(void)ctx;
	if (m->fd >= 0)
		close(m->fd);
	return 0;
}

/* Types 1, 3 and 4 are permitted; 2 is known but not from this peer. */
static const struct ipc_handler permit[] = {
	{ 1, accept_msg }, { 3, accept_msg }, { 4, accept_msg },
};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int sv[2] = { -1, -1 };
	struct ipc_peer p;

	if (sv[0] < 0 && socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) != 0)
		return 0;
	if (size > 65536 || send(sv[0], data, size, 0) < 0)
		return 0;
	p = (struct ipc_peer){ sv[1], "fuzz", &proto, permit, 3 };
	(void)ipc_dispatch(&p, NULL, NULL);
	return 0;
}
