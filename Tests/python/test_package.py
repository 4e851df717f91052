"""The Debian package (`make package`, .ci/package.sh), built, linted, installed on this machine, used, purged.

Installing changes the machine (a `twobits` system user, /usr/bin/twobits), so the tests run as root only
(CI runs as root) and refuse to run over a twobits package installed by someone else. The last test purges it.
"""
import grp
import os
import re
import pwd
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import REPO, Deployment, current_month, http, wait_until

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="dpkg -i needs root (CI runs as root)")

PROMOTION = "package-test"
INSTALLED = {
    # path: (mode, owner, group)
    "/usr/bin/twobits": (0o755, "root", "root"),
    "/lib/systemd/system/twobits.service": (0o644, "root", "root"),
    "/etc/twobits/config.example.json": (0o644, "root", "root"),
    "/usr/share/man/man1/twobits.1.gz": (0o644, "root", "root"),
    "/usr/share/doc/twobits/copyright": (0o644, "root", "root"),
    "/usr/share/doc/twobits/changelog.gz": (0o644, "root", "root"),
    "/etc/twobits": (0o750, "root", "twobits"),
    "/var/lib/twobits": (0o700, "twobits", "twobits"),
}


def run(*args, check=True, **kwargs):
    result = subprocess.run(list(args), capture_output=True, text=True, timeout=600, **kwargs)
    if check and result.returncode != 0:
        raise AssertionError(f"{' '.join(args)} exited {result.returncode}:\n{result.stdout}\n{result.stderr}")
    return result


def package_installed():
    result = run("dpkg-query", "-W", "-f=${Status}", "twobits", check=False)
    return "install ok installed" in result.stdout


@pytest.fixture(scope="module")
def deb():
    if package_installed():
        pytest.skip("a twobits package is already installed here; these tests would replace and purge it")
    built = run(str(REPO / ".ci" / "package.sh"), cwd=REPO)
    path = REPO / built.stdout.strip().splitlines()[-1]
    assert path.is_file(), built.stdout
    yield path
    if package_installed():
        run("dpkg", "-P", "twobits", check=False)


@pytest.fixture(scope="module")
def installed(deb):
    result = run("dpkg", "-i", str(deb))
    assert package_installed(), result.stdout
    return deb


def owner_mode(path):
    info = os.stat(path)
    return stat.S_IMODE(info.st_mode), pwd.getpwuid(info.st_uid).pw_name, grp.getgrgid(info.st_gid).gr_name


def test_lintian_reports_no_error(deb):
    result = run("lintian", "--fail-on", "error", "--no-tag-display-limit", str(deb), check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "\nE: " not in "\n" + result.stdout, result.stdout


def test_the_control_file_names_version_and_computed_dependencies(deb):
    fields = run("dpkg-deb", "-f", str(deb), "Package", "Version", "Depends").stdout
    version = run(str(REPO / ".build-package" / "build" / "release" / "twobits"), "--version").stdout.split()[1]
    assert f"Version: {version}" in fields
    # Computed by dpkg-shlibdeps from the binary: each C library the product links, and no Swift runtime.
    for library in ("libc6", "libcurl4", "libmicrohttpd12", "libpq5", "libsqlite3-0", "libssl3"):
        assert library in fields, fields
    assert "swift" not in fields.lower()
    # libcurl only recommends the CA bundle: without it (--no-install-recommends) every call to Apple fails its handshake.
    assert re.search(r"^Depends:.*\bca-certificates\b", fields, re.M), fields


def test_the_binary_is_small_because_full_foundation_stays_out(deb):
    # Full Foundation brings ICU (about 40 MB); the product imports FoundationEssentials only (docs/architecture.md).
    binary = REPO / ".build-package" / Path(deb).stem / "usr" / "bin" / "twobits"
    assert binary.stat().st_size <= 20 * 1024 * 1024, binary.stat().st_size
    symbols = run("nm", "--defined-only", str(REPO / ".build-package" / "build" / "release" / "twobits")).stdout
    assert "ucol_open" not in symbols and "icu_" not in symbols.lower(), "ICU is linked in"


def test_installed_files_owners_and_modes(installed):
    for path, expected in INSTALLED.items():
        assert os.path.exists(path), path
        assert owner_mode(path) == expected, path
    assert pwd.getpwnam("twobits").pw_dir == "/var/lib/twobits"
    assert pwd.getpwnam("twobits").pw_uid < 1000, "a system user"


def test_the_installed_binary_needs_no_swift_toolchain(installed):
    version = run("/usr/bin/twobits", "--version").stdout
    assert version.startswith("twobits ") and "commit " in version and "commit unknown" not in version, version
    libraries = run("ldd", "/usr/bin/twobits").stdout
    assert "swift" not in libraries.lower() and "/opt/" not in libraries, libraries
    for line in libraries.splitlines():
        if "=>" in line:
            assert line.split("=>")[1].strip().startswith(("/lib/", "/usr/lib/")), line


def test_without_a_configuration_it_refuses_and_says_what_to_do(installed):
    assert not os.path.exists("/etc/twobits/config.json")
    result = run("/usr/bin/twobits", "serve", "--config", "/etc/twobits/config.json", check=False)
    assert result.returncode == 1
    assert "config.example.json" in result.stderr, result.stderr


def test_the_installed_binary_serves_a_claim_as_the_twobits_user(installed):
    directory = Path(tempfile.mkdtemp(prefix="twobits-package-", dir="/tmp"))
    try:
        os.chmod(directory, 0o755)
        deployment = Deployment(directory / "deployment", promotions=[{"id": PROMOTION, "starts": current_month()}])
        deployment.binary = "/usr/bin/twobits"
        run("chown", "-R", "twobits:twobits", str(deployment.dir))
        deployment.start_sandbox()
        log = open(deployment.dir / "server.log", "ab")
        server = subprocess.Popen(["setpriv", "--reuid=twobits", "--regid=twobits", "--init-groups", "/usr/bin/twobits", "serve", "--config", str(deployment.config_path)],
                                  cwd=deployment.dir, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deployment.processes["server"] = server
        deployment.logs["server"] = deployment.dir / "server.log"
        try:
            wait_until(lambda: http("GET", deployment.url + "/readyz", timeout=2).status == 200, 20, "the installed twobits",
                       server, deployment.logs["server"])
            owner = run("ps", "-o", "user=", "-p", str(server.pid)).stdout.strip()
            assert owner == "twobits"
            token = deployment.mint(deployment.new_device())
            answer = deployment.post(f"/v1/promotions/{PROMOTION}/claim", {"device_token": token}, client="marketing")
            assert answer.status == 200, (answer, deployment.server_log())
            assert answer.json["claimed"] is True, answer
            # The ledger was written by the service's user.
            assert pwd.getpwuid(os.stat(deployment.dir / "twobits.sqlite").st_uid).pw_name == "twobits"
        finally:
            deployment.stop()
            log.close()
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def test_remove_keeps_user_and_state_then_purge_leaves_nothing(installed):
    files = [line for line in run("dpkg", "-L", "twobits").stdout.splitlines() if line.strip()]
    Path("/var/lib/twobits/twobits.sqlite").write_text("state")
    run("dpkg", "-r", "twobits")
    assert not os.path.exists("/usr/bin/twobits")
    assert pwd.getpwnam("twobits")
    assert os.path.exists("/var/lib/twobits/twobits.sqlite"), "remove keeps the ledger"
    assert os.path.exists("/etc/twobits/config.example.json"), "remove keeps conffiles"
    run("dpkg", "-P", "twobits")
    assert not package_installed()
    with pytest.raises(KeyError):
        pwd.getpwnam("twobits")
    with pytest.raises(KeyError):
        grp.getgrnam("twobits")
    for path in ["/var/lib/twobits", "/etc/twobits"] + files:
        # Shared directories (/usr/bin, /lib/systemd/system, …) belong to other packages too and stay.
        if path in ("/var/lib/twobits", "/etc/twobits") or not os.path.isdir(path):
            assert not os.path.exists(path), path
