// TwoBits' own C over OpenSSL (libssl-dev): fixed-signature wrappers for the macros and variadic functions
// TwoBits uses (Swift cannot call C macros or variadic functions directly), and the few conversions done in C.
// The definitions are in COpenSSLShims.c, compiled with -Wall -Wextra -Werror (Package.swift).
#ifndef TWOBITS_COPENSSL_SHIMS_H
#define TWOBITS_COPENSSL_SHIMS_H
#include <openssl/evp.h>
#include <openssl/bio.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <stddef.h>

/// Generates a fresh P-256 key pair.
EVP_PKEY *twobits_ec_p256_generate(void);

/// Bytes held by a memory BIO (BIO_get_mem_data is a macro).
long twobits_bio_mem_data(BIO *bio, char **out);

EVP_PKEY *twobits_read_private_key(BIO *bio);

EVP_PKEY *twobits_read_public_key(BIO *bio);

/// Writes an unencrypted PKCS#8 PEM ("BEGIN PRIVATE KEY").
int twobits_write_private_key(BIO *bio, EVP_PKEY *key);

void twobits_openssl_free(void *p);

/// Converts a DER ECDSA signature into raw r||s, each left-padded to 32 bytes. Returns 1 on success.
int twobits_ecdsa_der_to_raw(const unsigned char *der, long der_len, unsigned char *raw64);

/// Converts raw r||s into DER. Returns the DER length (at most 72) or 0.
int twobits_ecdsa_raw_to_der(const unsigned char *raw64, unsigned char *der, int der_cap);

/// The uncompressed public point 0x04||X||Y of an EC key. Returns its length (65 for P-256) or 0.
size_t twobits_ec_public_point(EVP_PKEY *key, unsigned char *out, size_t cap);

/// The curve name of an EC key ("prime256v1" for P-256), or an empty string.
int twobits_ec_group_name(EVP_PKEY *key, char *out, size_t cap);

int twobits_pkey_is_ec(EVP_PKEY *key);

/// A public-key-only copy of a key (for JWKS and sandbox verification).
EVP_PKEY *twobits_public_only(EVP_PKEY *key);

/// A new empty certificate stack (sk_X509_new_null is a macro). The stack does not own what it holds.
STACK_OF(X509) *twobits_x509_stack_new(void);

/// Appends a certificate, without taking a reference (sk_X509_push is a macro). Returns 0 on failure.
int twobits_x509_stack_push(STACK_OF(X509) *stack, X509 *cert);

/// Frees the stack itself, not the certificates it points to.
void twobits_x509_stack_free(STACK_OF(X509) *stack);

/// The top of a verified chain (the trust anchor), borrowed from the context; NULL when there is no chain.
X509 *twobits_x509_chain_top(X509_STORE_CTX *context);

/// A P-256 public key from its encoded point (EVP_PKEY_fromdata; much cheaper than decoding a
/// SubjectPublicKeyInfo through OpenSSL 3's decoder framework). Points off the curve are refused.
EVP_PKEY *twobits_p256_public_from_point(const unsigned char *point, size_t len);
#endif
