#ifndef TWOBITS_CBUILDINFO_SHIM_H
#define TWOBITS_CBUILDINFO_SHIM_H
/* The git commit a binary was built from. `make package` defines it
 * (-Xcc -DTWOBITS_GIT_COMMIT='"<commit>"'); other builds say "unknown" rather than
 * rebuild every module whenever the commit changes. A function, not the macro itself:
 * Swift does not import macros defined on the command line. Defined in BuildInfo.c, compiled with
 * -Wall -Wextra -Werror (Package.swift). */
const char *twobits_git_commit(void);
#endif
