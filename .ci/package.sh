#!/usr/bin/env bash
# Builds the Debian package: twobits_<version>_<arch>.deb in .build-package/ (printed on the last line).
# The binary is a release build with the Swift runtime linked statically, stripped, carrying the git
# commit; the version comes from `twobits --version` (Sources/twobits/CLI/BuildInfo.swift); `Depends:` is
# computed from the binary by dpkg-shlibdeps, plus adduser and ca-certificates (libcurl only recommends the CA
# bundle that verifies Apple's certificates; control.in). deploy/debian holds the control template, maintainer
# scripts, man page and example configuration; deploy/systemd the unit.
set -euo pipefail
cd "$(dirname "$0")/.."

SWIFT=${SWIFT:-swift}
out=.build-package
# TWOBITS_GIT_COMMIT: a copy without .git (the mutation runner's) says which commit it was made from.
commit=${TWOBITS_GIT_COMMIT:-$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}
if [[ -z ${TWOBITS_GIT_COMMIT:-} && $commit != unknown ]] && ! git diff --quiet HEAD -- Sources Package.swift 2>/dev/null; then commit="$commit-dirty"; fi

# Its own scratch path: the commit is compiled in (-Xcc), which would rebuild every module of .build/release.
"$SWIFT" build -c release --static-swift-stdlib --scratch-path "$out/build" --product twobits \
    -Xcc "-DTWOBITS_GIT_COMMIT=\"$commit\"" 2>&1 | grep -v "warning: the use of \`mktemp' is dangerous" | tail -n 3

binary="$out/build/release/twobits"
version=$("$binary" --version | awk '{print $2}')
arch=$(dpkg --print-architecture)
name="twobits_${version}_${arch}"
root="$out/$name"
rm -rf "$root" "$out/$name.deb"

install -d -m 0755 "$root/DEBIAN" "$root/usr/bin" "$root/lib/systemd/system" "$root/etc/twobits" \
    "$root/usr/share/doc/twobits" "$root/usr/share/man/man1"
install -m 0755 --strip "$binary" "$root/usr/bin/twobits"
install -m 0644 deploy/systemd/twobits.service "$root/lib/systemd/system/twobits.service"
install -m 0644 deploy/debian/config.example.json "$root/etc/twobits/config.example.json"
install -m 0644 deploy/debian/copyright "$root/usr/share/doc/twobits/copyright"
for doc in operations configuration; do gzip -9n < "docs/$doc.md" > "$root/usr/share/doc/twobits/$doc.md.gz"; done
gzip -9n < deploy/debian/twobits.1 > "$root/usr/share/man/man1/twobits.1.gz"
# A native package's changelog, one entry per build: version, commit and the date of the commit.
date=$(git log -1 --format=%cD 2>/dev/null || date -R)
printf 'twobits (%s) stable; urgency=medium\n\n  * Release %s, built from commit %s.\n\n -- TwoBits team <team@twobits.dev>  %s\n' \
    "$version" "$version" "$commit" "$date" | gzip -9n > "$root/usr/share/doc/twobits/changelog.gz"
chmod 0644 "$root"/usr/share/doc/twobits/* "$root/usr/share/man/man1/twobits.1.gz"

for script in postinst prerm postrm; do install -m 0755 "deploy/debian/$script" "$root/DEBIAN/$script"; done
install -m 0644 deploy/debian/conffiles "$root/DEBIAN/conffiles"

# dpkg-shlibdeps reads debian/control from its working directory: give it a minimal one.
shlibs=$(mktemp -d)
mkdir "$shlibs/debian"
printf 'Source: twobits\n\nPackage: twobits\nArchitecture: any\n' > "$shlibs/debian/control"
depends=$(cd "$shlibs" && dpkg-shlibdeps -O "$OLDPWD/$root/usr/bin/twobits" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
rm -rf "$shlibs"
[[ -n $depends ]] || { echo "dpkg-shlibdeps found no dependencies" >&2; exit 1; }

size=$(du -k -s --exclude=DEBIAN "$root" | cut -f1)
sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@INSTALLED_SIZE@/$size/" -e "s/@DEPENDS@/$depends/" \
    deploy/debian/control.in > "$root/DEBIAN/control"
(cd "$root" && find . -type f ! -path './DEBIAN/*' -printf '%P\0' | sort -z | xargs -0 md5sum) > "$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/md5sums"

dpkg-deb --root-owner-group -Zxz --build "$root" "$out/$name.deb" >/dev/null
echo "$out/$name.deb"
