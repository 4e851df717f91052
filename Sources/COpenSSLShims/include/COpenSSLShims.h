// TwoBits' own C over OpenSSL (libssl-dev): fixed-signature wrappers for the macros and variadic functions
// TwoBits uses (Swift cannot call C macros or variadic functions directly), and the few conversions done in C.
// The definitions are in COpenSSLShims.c, compiled with -Wall -Wextra -Werror (Package.swift).
#ifndef TWOBITS_COPENSSL_SHIMS_H
#define TWOBITS_COPENSSL_SHIMS_H
#include <openssl/evp.h>
#include <openssl/bio.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/cms.h>
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

/// Parses one CMS ContentInfo (BER, indefinite lengths allowed, or DER) filling exactly `len` bytes; NULL when
/// malformed or followed by other bytes.
CMS_ContentInfo *twobits_cms_read(const unsigned char *bytes, size_t len);

/// Encodes a CMS ContentInfo as DER (definite lengths, the content as one OCTET STRING). Returns the length
/// written to *out (to free with twobits_openssl_free), or 0.
int twobits_cms_write_der(CMS_ContentInfo *cms, unsigned char **out);

/// The number of signer infos of a signed-data (sk_CMS_SignerInfo_num is a macro); -1 when not signed-data.
int twobits_cms_signer_count(CMS_ContentInfo *cms);

/// The signer info at `index`, borrowed from `cms`.
CMS_SignerInfo *twobits_cms_signer(CMS_ContentInfo *cms, int index);

/// The certificates a signed-data carries, each with a reference of its own; free with twobits_x509_stack_free_all.
STACK_OF(X509) *twobits_cms_certificates(CMS_ContentInfo *cms);

/// The number of certificates in a stack (a macro).
int twobits_x509_stack_count(const STACK_OF(X509) *stack);

/// The certificate at `index`, borrowed from the stack (a macro).
X509 *twobits_x509_stack_value(const STACK_OF(X509) *stack, int index);

/// Frees the stack and drops one reference of each certificate in it (sk_X509_pop_free is a macro).
void twobits_x509_stack_free_all(STACK_OF(X509) *stack);

/// The signer's messageDigest signed attribute (borrowed), or NULL when it has none.
ASN1_OCTET_STRING *twobits_cms_signer_message_digest(CMS_SignerInfo *signer);
#endif
