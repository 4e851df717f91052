// Fixed-signature wrappers for the OpenSSL macros and variadic functions TwoBits uses.
// Swift cannot call C macros or variadic functions directly.
#ifndef TWOBITS_COPENSSL_SHIM_H
#define TWOBITS_COPENSSL_SHIM_H

#include <openssl/evp.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/bn.h>
#include <openssl/pem.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/rand.h>
#include <openssl/crypto.h>
#include <openssl/core_names.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>
#include <openssl/objects.h>
#include <openssl/params.h>

/// Generates a fresh P-256 key pair.
static inline EVP_PKEY *twobits_ec_p256_generate(void) {
    return EVP_EC_gen("P-256");
}

/// Bytes held by a memory BIO (BIO_get_mem_data is a macro).
static inline long twobits_bio_mem_data(BIO *bio, char **out) {
    return BIO_get_mem_data(bio, out);
}

/// A passphrase callback that always fails, so encrypted keys are refused instead of prompting.
static inline int twobits_no_passphrase(char *buf, int size, int rwflag, void *u) {
    (void)buf; (void)size; (void)rwflag; (void)u;
    return -1;
}

static inline EVP_PKEY *twobits_read_private_key(BIO *bio) {
    return PEM_read_bio_PrivateKey(bio, NULL, twobits_no_passphrase, NULL);
}

static inline EVP_PKEY *twobits_read_public_key(BIO *bio) {
    return PEM_read_bio_PUBKEY(bio, NULL, twobits_no_passphrase, NULL);
}

/// Writes an unencrypted PKCS#8 PEM ("BEGIN PRIVATE KEY").
static inline int twobits_write_private_key(BIO *bio, EVP_PKEY *key) {
    return PEM_write_bio_PKCS8PrivateKey(bio, key, NULL, NULL, 0, NULL, NULL);
}

static inline void twobits_openssl_free(void *p) { OPENSSL_free(p); }

/// Converts a DER ECDSA signature into raw r||s, each left-padded to 32 bytes. Returns 1 on success.
static inline int twobits_ecdsa_der_to_raw(const unsigned char *der, long der_len, unsigned char *raw64) {
    const unsigned char *p = der;
    ECDSA_SIG *sig = d2i_ECDSA_SIG(NULL, &p, der_len);
    if (sig == NULL) return 0;
    const BIGNUM *r = NULL, *s = NULL;
    ECDSA_SIG_get0(sig, &r, &s);
    int ok = BN_bn2binpad(r, raw64, 32) == 32 && BN_bn2binpad(s, raw64 + 32, 32) == 32;
    ECDSA_SIG_free(sig);
    return ok;
}

/// Converts raw r||s into DER. Returns the DER length (at most 72) or 0.
static inline int twobits_ecdsa_raw_to_der(const unsigned char *raw64, unsigned char *der, int der_cap) {
    ECDSA_SIG *sig = ECDSA_SIG_new();
    if (sig == NULL) return 0;
    BIGNUM *r = BN_bin2bn(raw64, 32, NULL);
    BIGNUM *s = BN_bin2bn(raw64 + 32, 32, NULL);
    if (r == NULL || s == NULL || ECDSA_SIG_set0(sig, r, s) != 1) {
        BN_free(r); BN_free(s); ECDSA_SIG_free(sig);
        return 0;
    }
    int len = i2d_ECDSA_SIG(sig, NULL);
    if (len <= 0 || len > der_cap) { ECDSA_SIG_free(sig); return 0; }
    unsigned char *p = der;
    len = i2d_ECDSA_SIG(sig, &p);
    ECDSA_SIG_free(sig);
    return len;
}

/// The uncompressed public point 0x04||X||Y of an EC key. Returns its length (65 for P-256) or 0.
static inline size_t twobits_ec_public_point(EVP_PKEY *key, unsigned char *out, size_t cap) {
    size_t len = 0;
    if (EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_PUB_KEY, out, cap, &len) != 1) return 0;
    return len;
}

/// The curve name of an EC key ("prime256v1" for P-256), or an empty string.
static inline int twobits_ec_group_name(EVP_PKEY *key, char *out, size_t cap) {
    size_t len = 0;
    if (EVP_PKEY_get_group_name(key, out, cap, &len) != 1) { if (cap) out[0] = 0; return 0; }
    return 1;
}

static inline int twobits_pkey_is_ec(EVP_PKEY *key) { return EVP_PKEY_get_base_id(key) == EVP_PKEY_EC; }

/// A public-key-only copy of a key (for JWKS and sandbox verification).
static inline EVP_PKEY *twobits_public_only(EVP_PKEY *key) {
    BIO *bio = BIO_new(BIO_s_mem());
    if (bio == NULL) return NULL;
    EVP_PKEY *pub = NULL;
    if (PEM_write_bio_PUBKEY(bio, key) == 1) pub = PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL);
    BIO_free(bio);
    return pub;
}

/// A new empty certificate stack (sk_X509_new_null is a macro). The stack does not own what it holds.
static inline STACK_OF(X509) *twobits_x509_stack_new(void) { return sk_X509_new_null(); }

/// Appends a certificate, without taking a reference (sk_X509_push is a macro). Returns 0 on failure.
static inline int twobits_x509_stack_push(STACK_OF(X509) *stack, X509 *cert) { return sk_X509_push(stack, cert); }

/// Frees the stack itself, not the certificates it points to.
static inline void twobits_x509_stack_free(STACK_OF(X509) *stack) { sk_X509_free(stack); }

/// The top of a verified chain (the trust anchor), borrowed from the context; NULL when there is no chain.
static inline X509 *twobits_x509_chain_top(X509_STORE_CTX *context) {
    STACK_OF(X509) *chain = X509_STORE_CTX_get0_chain(context);
    int count = chain ? sk_X509_num(chain) : 0;
    return count > 0 ? sk_X509_value(chain, count - 1) : NULL;
}

/// A P-256 public key from its encoded point (EVP_PKEY_fromdata; much cheaper than decoding a
/// SubjectPublicKeyInfo through OpenSSL 3's decoder framework). Points off the curve are refused.
static inline EVP_PKEY *twobits_p256_public_from_point(const unsigned char *point, size_t len) {
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
    if (ctx == NULL) return NULL;
    EVP_PKEY *pkey = NULL;
    OSSL_PARAM params[3];
    params[0] = OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, (char *)"prime256v1", 0);
    params[1] = OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PUB_KEY, (void *)point, len);
    params[2] = OSSL_PARAM_construct_end();
    if (EVP_PKEY_fromdata_init(ctx) != 1 || EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) != 1) pkey = NULL;
    EVP_PKEY_CTX_free(ctx);
    return pkey;
}

#endif
