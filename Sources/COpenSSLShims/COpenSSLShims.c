// See include/COpenSSLShims.h for what each function does.
#include "COpenSSLShims.h"
#include <openssl/bn.h>
#include <limits.h>
#include <openssl/cms.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/params.h>
#include <openssl/pem.h>

EVP_PKEY *twobits_ec_p256_generate(void) {
    return EVP_EC_gen("P-256");
}

long twobits_bio_mem_data(BIO *bio, char **out) {
    return BIO_get_mem_data(bio, out);
}

/// A passphrase callback that always fails, so encrypted keys are refused instead of prompting.
static int twobits_no_passphrase(char *buf, int size, int rwflag, void *u) {
    (void)buf; (void)size; (void)rwflag; (void)u;
    return -1;
}

EVP_PKEY *twobits_read_private_key(BIO *bio) {
    return PEM_read_bio_PrivateKey(bio, NULL, twobits_no_passphrase, NULL);
}

EVP_PKEY *twobits_read_public_key(BIO *bio) {
    return PEM_read_bio_PUBKEY(bio, NULL, twobits_no_passphrase, NULL);
}

int twobits_write_private_key(BIO *bio, EVP_PKEY *key) {
    return PEM_write_bio_PKCS8PrivateKey(bio, key, NULL, NULL, 0, NULL, NULL);
}

void twobits_openssl_free(void *p) { OPENSSL_free(p); }

int twobits_ecdsa_der_to_raw(const unsigned char *der, long der_len, unsigned char *raw64) {
    const unsigned char *p = der;
    ECDSA_SIG *sig = d2i_ECDSA_SIG(NULL, &p, der_len);
    if (sig == NULL) return 0;
    const BIGNUM *r = NULL, *s = NULL;
    ECDSA_SIG_get0(sig, &r, &s);
    int ok = BN_bn2binpad(r, raw64, 32) == 32 && BN_bn2binpad(s, raw64 + 32, 32) == 32;
    ECDSA_SIG_free(sig);
    return ok;
}

int twobits_ecdsa_raw_to_der(const unsigned char *raw64, unsigned char *der, int der_cap) {
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

size_t twobits_ec_public_point(EVP_PKEY *key, unsigned char *out, size_t cap) {
    size_t len = 0;
    if (EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_PUB_KEY, out, cap, &len) != 1) return 0;
    return len;
}

int twobits_ec_group_name(EVP_PKEY *key, char *out, size_t cap) {
    size_t len = 0;
    if (EVP_PKEY_get_group_name(key, out, cap, &len) != 1) { if (cap) out[0] = 0; return 0; }
    return 1;
}

int twobits_pkey_is_ec(EVP_PKEY *key) { return EVP_PKEY_get_base_id(key) == EVP_PKEY_EC; }

EVP_PKEY *twobits_public_only(EVP_PKEY *key) {
    BIO *bio = BIO_new(BIO_s_mem());
    if (bio == NULL) return NULL;
    EVP_PKEY *pub = NULL;
    if (PEM_write_bio_PUBKEY(bio, key) == 1) pub = PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL);
    BIO_free(bio);
    return pub;
}

STACK_OF(X509) *twobits_x509_stack_new(void) { return sk_X509_new_null(); }

int twobits_x509_stack_push(STACK_OF(X509) *stack, X509 *cert) { return sk_X509_push(stack, cert); }

void twobits_x509_stack_free(STACK_OF(X509) *stack) { sk_X509_free(stack); }

X509 *twobits_x509_chain_top(X509_STORE_CTX *context) {
    STACK_OF(X509) *chain = X509_STORE_CTX_get0_chain(context);
    int count = chain ? sk_X509_num(chain) : 0;
    return count > 0 ? sk_X509_value(chain, count - 1) : NULL;
}

EVP_PKEY *twobits_p256_public_from_point(const unsigned char *point, size_t len) {
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

CMS_ContentInfo *twobits_cms_read(const unsigned char *bytes, size_t len) {
    if (len == 0 || len > (size_t)LONG_MAX) return NULL;
    const unsigned char *cursor = bytes;
    CMS_ContentInfo *cms = d2i_CMS_ContentInfo(NULL, &cursor, (long)len);
    if (cms != NULL && cursor != bytes + len) {
        CMS_ContentInfo_free(cms);
        return NULL;
    }
    return cms;
}

int twobits_cms_write_der(CMS_ContentInfo *cms, unsigned char **out) {
    *out = NULL;
    int length = i2d_CMS_ContentInfo(cms, out);
    return length > 0 ? length : 0;
}

int twobits_cms_signer_count(CMS_ContentInfo *cms) {
    if (OBJ_obj2nid(CMS_get0_type(cms)) != NID_pkcs7_signed) return -1;
    STACK_OF(CMS_SignerInfo) *signers = CMS_get0_SignerInfos(cms);
    return signers ? sk_CMS_SignerInfo_num(signers) : 0;
}

CMS_SignerInfo *twobits_cms_signer(CMS_ContentInfo *cms, int index) {
    STACK_OF(CMS_SignerInfo) *signers = CMS_get0_SignerInfos(cms);
    return signers ? sk_CMS_SignerInfo_value(signers, index) : NULL;
}

STACK_OF(X509) *twobits_cms_certificates(CMS_ContentInfo *cms) { return CMS_get1_certs(cms); }

int twobits_x509_stack_count(const STACK_OF(X509) *stack) { return stack ? sk_X509_num(stack) : 0; }

X509 *twobits_x509_stack_value(const STACK_OF(X509) *stack, int index) { return sk_X509_value(stack, index); }

void twobits_x509_stack_free_all(STACK_OF(X509) *stack) { sk_X509_pop_free(stack, X509_free); }

ASN1_OCTET_STRING *twobits_cms_signer_message_digest(CMS_SignerInfo *signer) {
    return CMS_signed_get0_data_by_OBJ(signer, OBJ_nid2obj(NID_pkcs9_messageDigest), -3, V_ASN1_OCTET_STRING);
}
