#ifndef TWOBITS_CPOSTGRES_SHIM_H
#define TWOBITS_CPOSTGRES_SHIM_H
// libpq from Debian's libpq-dev (pkg-config libpq puts /usr/include/postgresql on the include path).
#include <libpq-fe.h>
#endif
