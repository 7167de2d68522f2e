/*
 * tests/testcert.c — see testcert.h.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "tests/testcert.h"

/* A self-signed P-256 certificate and its key, as PEM in memory. */
static int
testcert_pem(char *cert, size_t certlen, char *key, size_t keylen)
{
	EVP_PKEY *k = EVP_EC_gen("P-256");
	X509 *x = X509_new();
	BIO *b;
	int ok;

	X509_set_version(x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
	X509_gmtime_adj(X509_getm_notBefore(x), -60);
	X509_gmtime_adj(X509_getm_notAfter(x), 3600);
	X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN", MBSTRING_ASC,
	    (const unsigned char *)"test", -1, -1, 0);
	X509_set_issuer_name(x, X509_get_subject_name(x));
	X509_set_pubkey(x, k);
	ok = X509_sign(x, k, EVP_sha256()) > 0;
	b = BIO_new(BIO_s_mem());
	ok = ok && PEM_write_bio_X509(b, x) == 1 &&
	    BIO_read(b, cert, (int)certlen - 1) > 0;
	BIO_free(b);
	b = BIO_new(BIO_s_mem());
	ok = ok && PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL) ==
	    1 && BIO_read(b, key, (int)keylen - 1) > 0;
	BIO_free(b);
	X509_free(x);
	EVP_PKEY_free(k);
	return ok;
}

int
testcert_tls(struct tls_ctx **tls, char *err, size_t errlen)
{
	char cert[4096] = { 0 }, key[4096] = { 0 };
	int rc;

	if (!testcert_pem(cert, sizeof(cert), key, sizeof(key))) {
		snprintf(err, errlen, "cannot make a test certificate");
		return -1;
	}
	rc = tls_ctx_alloc(tls, cert, strlen(cert), key, strlen(key), err,
	    errlen) == TLS_OK ? 0 : -1;
	explicit_bzero(key, sizeof(key));
	return rc;
}
