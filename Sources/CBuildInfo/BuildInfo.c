// See include/CBuildInfo.h.
#include "CBuildInfo.h"

#ifndef TWOBITS_GIT_COMMIT
#define TWOBITS_GIT_COMMIT "unknown"
#endif

const char *twobits_git_commit(void) { return TWOBITS_GIT_COMMIT; }
