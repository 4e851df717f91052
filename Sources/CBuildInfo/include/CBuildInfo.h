#ifndef TWOBITS_CBUILDINFO_SHIM_H
#define TWOBITS_CBUILDINFO_SHIM_H
/* The git commit a binary was built from: the Makefile's builds write it into GitCommit.h beside
 * BuildInfo.c (.ci/build-commit.sh), `make package` defines it (-Xcc -DTWOBITS_GIT_COMMIT='"<commit>"');
 * a plain `swift build` without either says "unknown". A function, not the macro itself:
 * Swift does not import macros defined on the command line. Defined in BuildInfo.c, compiled with
 * -Wall -Wextra -Werror (Package.swift). */
const char *twobits_git_commit(void);
#endif
