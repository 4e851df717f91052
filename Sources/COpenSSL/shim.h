// Debian's OpenSSL headers (libssl-dev), as one module: includes only. TwoBits' own C over OpenSSL (the
// fixed-signature wrappers of its macros and variadic functions) is Sources/COpenSSLShims.
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
#include <openssl/cms.h>
#include <openssl/objects.h>
#include <openssl/params.h>

#endif
