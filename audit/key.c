/*
 * audit/key.c — the audit log's Ed25519 keys through OpenSSL: generate,
 * load (refusing a private key others can read), sign, verify, and the
 * key id (first 16 hex digits of SHA-256 of the raw public key).
 *
 * Trust: the key files are the operator's; a private key file that is
 * group/world-accessible is refused, as OpenSSH refuses host keys.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/pem.h>

#include "audit/audit.h"
#include "common/digest.h"

struct audit_key {
	EVP_PKEY	*pk;
	int		 has_private;
};

static const char *const status_names[] = {
	[AUDIT_OK] = "success",
	[AUDIT_EIO] = "input/output error",
	[AUDIT_EINVAL] = "invalid argument",
	[AUDIT_EKEY] = "unusable key",
	[AUDIT_ESIGN] = "signing failed",
	[AUDIT_ECORRUPT] = "the existing log is broken",
	[AUDIT_ETAMPER] = "the log was modified",
};

const char *
audit_strerror(int status)
{
	if (status < 0 || (size_t)status >= sizeof(status_names) /
	    sizeof(status_names[0]))
		return "unknown audit error";
	return status_names[status];
}

/* Write a PEM with the given mode, never over an existing file. */
static int
write_pem(const char *path, mode_t mode, EVP_PKEY *pk, int priv, char *err,
    size_t errlen)
{
	FILE *f;
	int fd, ok;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)) < 0)
		return snprintf(err, errlen, "%s: %s", path, strerror(errno)),
		    AUDIT_EKEY;
	if ((f = fdopen(fd, "w")) == NULL) {
		close(fd);
		return snprintf(err, errlen, "%s: out of memory", path),
		    AUDIT_EIO;
	}
	ok = priv ? PEM_write_PrivateKey(f, pk, NULL, NULL, 0, NULL, NULL) :
	    PEM_write_PUBKEY(f, pk);
	if (fclose(f) != 0 || !ok) {
		unlink(path);
		return snprintf(err, errlen, "%s: writing the key failed",
		    path), AUDIT_EIO;
	}
	return AUDIT_OK;
}

int
audit_key_generate(const char *priv_path, const char *pub_path, char *err,
    size_t errlen)
{
	EVP_PKEY *pk = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
	int rc;

	if (pk == NULL)
		return snprintf(err, errlen, "Ed25519 key generation failed"),
		    AUDIT_EKEY;
	rc = write_pem(priv_path, 0600, pk, 1, err, errlen);
	if (rc == AUDIT_OK && (rc = write_pem(pub_path, 0644, pk, 0, err,
	    errlen)) != AUDIT_OK)
		unlink(priv_path);
	EVP_PKEY_free(pk);
	return rc;
}

static int
key_load(const char *path, int priv, struct audit_key **out, char *err,
    size_t errlen)
{
	struct audit_key *k;
	struct stat st;
	FILE *f;

	*out = NULL;
	if ((f = fopen(path, "re")) == NULL)
		return snprintf(err, errlen, "%s: %s", path, strerror(errno)),
		    AUDIT_EKEY;
	if (priv && (fstat(fileno(f), &st) != 0 || (st.st_mode & 077) != 0)) {
		fclose(f);
		return snprintf(err, errlen, "%s: a private key must not be "
		    "accessible by group or others (mode %03o)", path,
		    (unsigned)(st.st_mode & 0777)), AUDIT_EKEY;
	}
	if ((k = calloc(1, sizeof(*k))) == NULL) {
		fclose(f);
		return snprintf(err, errlen, "out of memory"), AUDIT_EIO;
	}
	k->pk = priv ? PEM_read_PrivateKey(f, NULL, NULL, NULL) :
	    PEM_read_PUBKEY(f, NULL, NULL, NULL);
	k->has_private = priv;
	fclose(f);
	if (k->pk == NULL || EVP_PKEY_get_id(k->pk) != EVP_PKEY_ED25519) {
		audit_key_free(k);
		return snprintf(err, errlen, "%s: not an Ed25519 %s key in PEM",
		    path, priv ? "private" : "public"), AUDIT_EKEY;
	}
	*out = k;
	return AUDIT_OK;
}

int
audit_key_load_private(const char *path, struct audit_key **out, char *err,
    size_t errlen)
{
	return key_load(path, 1, out, err, errlen);
}

int
audit_key_load_public(const char *path, struct audit_key **out, char *err,
    size_t errlen)
{
	return key_load(path, 0, out, err, errlen);
}

void
audit_key_free(struct audit_key *k)
{
	if (k == NULL)
		return;
	EVP_PKEY_free(k->pk);
	free(k);
}

void
audit_key_id(const struct audit_key *k, char id[AUDIT_KEYID_LEN + 1])
{
	uint8_t pub[AUDIT_PUB_LEN], md[DIGEST_LEN];
	size_t len = sizeof(pub), i;

	memset(id, 0, AUDIT_KEYID_LEN + 1);
	if (EVP_PKEY_get_raw_public_key(k->pk, pub, &len) != 1 ||
	    digest_buf(pub, len, md) != DIGEST_OK)
		return;
	for (i = 0; i < AUDIT_KEYID_LEN / 2; i++)
		snprintf(id + 2 * i, 3, "%02x", md[i]);
}

static int
key_sign(void *ctx, const uint8_t *msg, size_t len, uint8_t sig[AUDIT_SIG_LEN])
{
	struct audit_key *k = ctx;
	EVP_MD_CTX *mc = EVP_MD_CTX_new();
	size_t slen = AUDIT_SIG_LEN;
	int ok;

	ok = mc != NULL && k->has_private &&
	    EVP_DigestSignInit(mc, NULL, NULL, NULL, k->pk) == 1 &&
	    EVP_DigestSign(mc, sig, &slen, msg, len) == 1 &&
	    slen == AUDIT_SIG_LEN;
	EVP_MD_CTX_free(mc);
	return ok ? 0 : -1;
}

void
audit_key_signer(struct audit_key *k, struct audit_signer *s)
{
	s->sign = key_sign;
	s->ctx = k;
	audit_key_id(k, s->key_id);
}

int
audit_key_verify(const struct audit_key *k, const uint8_t *msg, size_t len,
    const uint8_t sig[AUDIT_SIG_LEN])
{
	EVP_MD_CTX *mc = EVP_MD_CTX_new();
	int ok;

	ok = mc != NULL &&
	    EVP_DigestVerifyInit(mc, NULL, NULL, NULL, k->pk) == 1 &&
	    EVP_DigestVerify(mc, sig, AUDIT_SIG_LEN, msg, len) == 1;
	EVP_MD_CTX_free(mc);
	return ok;
}
