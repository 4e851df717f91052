#!/usr/bin/env python3
"""A fake Apple over TLS: Debian's nginx terminating TLS 1.2/1.3 with HTTP/2 by ALPN in front of `twobits sandbox`,
under Apple's own host names, with certificates made here for the failure cases.

Every variant listens on port 443 of an address of its own in 127.0.0.0/8 (picked at random, so that parallel
runs on one machine do not meet):

  good          a certificate for Apple's four host names, signed by this run's CA; HTTP/2 and HTTP/1.1 by ALPN,
                at most `http2_max_concurrent_streams` (100) streams per connection
  http1         the same certificate, HTTP/1.1 only (no h2 in ALPN), keep-alive
  expired       signed by the CA, expired yesterday
  self_signed   a self-signed certificate for the four names
  wrong_host    signed by the CA, for another host name only
  other_ca      for the four names, signed by another CA
  tls11         the good certificate, but TLS 1.1 only (a version Apple does not offer; OpenSSL's security level 0
                lets nginx speak it)
  weak_cipher   the good certificate, TLS 1.2 with one suite only, ECDHE-ECDSA-AES128-SHA (CBC, SHA-1): accepted by
                OpenSSL's default list, not one Apple negotiates
  stall         a TCP listener that never accepts: the TLS handshake never gets an answer
  goaway        the good certificate, HTTP/2; nginx ends each connection with GOAWAY after REQUESTS_BEFORE_GOAWAY (10)
                requests (`keepalive_requests`)
  reset         the good certificate, HTTP/2; the first request of each connection is reset mid-stream (nginx's
                `return 444`: RST_STREAM on HTTP/2, the connection closed on HTTP/1.1), the others are answered
  reset_update  the good certificate, HTTP/2; every update (`/v1/update_two_bits`) is reset the same way once its
                request headers are in (validate and query are answered): an update the client cannot know the outcome of
  few_streams   the good certificate, HTTP/2 with FEW_STREAMS (16) streams per connection, far below the 100 curl is
                told to use: a server's lower limit, which only its SETTINGS frame says

TwoBits reaches a variant under the production names through `namespaced()`: the process runs in a private mount
namespace (`unshare --mount`) in which /etc/hosts (and, if asked, the system's CA bundle) is a file of the test's,
bind-mounted over the real one. Nothing changes outside that process: no configuration field maps host names, so
nothing of this can reach a real deployment. Needs root (the tests run as root), nginx and the `cryptography` package.

As a command, for trying by hand: `fake_apple.py --dir DIR --upstream http://127.0.0.1:PORT` starts nginx and prints
the addresses, the CA file and a hosts file, until interrupted.
"""
import argparse
import datetime
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

APPLE_HOSTS = [
    "api.devicecheck.apple.com",
    "api.development.devicecheck.apple.com",
    "data.appattest.apple.com",
    "data-development.appattest.apple.com",
]
VARIANTS = ["good", "http1", "expired", "self_signed", "wrong_host", "other_ca", "tls11", "weak_cipher", "stall", "goaway", "reset", "reset_update", "few_streams"]
REQUESTS_BEFORE_GOAWAY = 10
STREAMS_PER_CONNECTION = 100
FEW_STREAMS = 16
# What nginx writes per request: enough to tell the host, the HTTP version and the TLS connection of each call, and
# when it ended (seconds since the epoch: Benchmarks/benchlib/link.py tells a run's start from its steady state).
LOG_FIELDS = ["server_addr", "host", "protocol", "connection", "connection_requests", "status", "method", "uri", "ssl_protocol", "msec"]
LOG_FORMAT = "$server_addr $host $server_protocol $connection $connection_requests $status $request_method $uri $ssl_protocol $msec"


def _name(common_name):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _key():
    return ec.generate_private_key(ec.SECP256R1())


def _write(path, certificate, key=None):
    path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    if key is not None:
        path.with_suffix(".key").write_bytes(key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))


def _certificate(subject, key, issuer, issuer_key, names=None, ca=False, not_before=None, not_after=None):
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (x509.CertificateBuilder()
               .subject_name(subject).issuer_name(issuer).public_key(key.public_key())
               .serial_number(x509.random_serial_number())
               .not_valid_before(not_before or now - datetime.timedelta(days=1))
               .not_valid_after(not_after or now + datetime.timedelta(days=30))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if ca:
        builder = builder.add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
                                                      key_encipherment=False, data_encipherment=False, key_agreement=False,
                                                      encipher_only=False, decipher_only=False), critical=True)
    else:
        builder = builder.add_extension(x509.SubjectAlternativeName([x509.DNSName(n) for n in names]), critical=False)
        builder = builder.add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def make_certificates(directory):
    """Writes ca.pem, other-ca.pem and one server certificate (NAME.pem, NAME.key) per TLS variant. Returns directory."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key, other_key = _key(), _key()
    ca = _certificate(_name("TwoBits test CA"), ca_key, _name("TwoBits test CA"), ca_key, ca=True)
    other = _certificate(_name("Another test CA"), other_key, _name("Another test CA"), other_key, ca=True)
    _write(directory / "ca.pem", ca)
    _write(directory / "other-ca.pem", other)
    servers = {
        "good": dict(issuer=ca, issuer_key=ca_key),
        "expired": dict(issuer=ca, issuer_key=ca_key, not_before=now - datetime.timedelta(days=30), not_after=now - datetime.timedelta(days=1)),
        "wrong_host": dict(issuer=ca, issuer_key=ca_key, names=["devicecheck.example.com"]),
        "other_ca": dict(issuer=other, issuer_key=other_key),
    }
    for name, options in servers.items():
        key = _key()
        issuer = options.pop("issuer")
        names = options.pop("names", APPLE_HOSTS)
        _write(directory / f"{name}.pem", _certificate(_name(names[0]), key, issuer.subject, names=names, **options), key)
    key = _key()
    _write(directory / "self_signed.pem", _certificate(_name(APPLE_HOSTS[0]), key, _name(APPLE_HOSTS[0]), key, names=APPLE_HOSTS), key)
    return directory


def _free_addresses(count):
    """`count` consecutive loopback addresses whose port 443 is free."""
    for _ in range(50):
        base = f"127.{random.randint(100, 250)}.{random.randint(0, 255)}."
        addresses = [base + str(i) for i in range(1, count + 1)]
        try:
            for address in addresses:
                with socket.socket() as s:
                    s.bind((address, 443))
            return addresses
        except OSError:
            continue
    raise RuntimeError("no free loopback address range for port 443")


class FakeApple:
    """nginx on loopback port 443 for every variant, proxying to `upstream` (the sandbox's http:// URL).

    `address[variant]`, `hosts_file(variant)`, `log()` (one dict per request, LOG_FIELDS), `stop()`."""

    def __init__(self, directory, upstream):
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.certs = make_certificates(self.dir / "certs")
        self.ca_file = self.certs / "ca.pem"
        self.other_ca_file = self.certs / "other-ca.pem"
        self.address = dict(zip(VARIANTS, _free_addresses(len(VARIANTS))))
        self.access_log = self.dir / "access.log"
        # For a client process's OPENSSL_CONF: OpenSSL's own floor lowered to TLS 1.0 and security level 0, so that
        # only the client's own minimum (TwoBits: TLS 1.2) refuses the tls11 variant.
        self.permissive_openssl_conf = self.dir / "openssl-permissive.cnf"
        self.permissive_openssl_conf.write_text(
            "openssl_conf = openssl_init\n[openssl_init]\nssl_conf = ssl_sect\n[ssl_sect]\nsystem_default = system_default_sect\n"
            "[system_default_sect]\nMinProtocol = TLSv1\nCipherString = DEFAULT:@SECLEVEL=0\n")
        self.error_log = self.dir / "error.log"
        self.upstream = re.sub(r"^http://", "", upstream.rstrip("/"))
        self.process = None
        self.stall = None
        if not shutil.which("nginx"):
            raise RuntimeError("nginx is not installed (.ci/install-deps.sh --test)")
        self._start()

    def _server(self, variant, certificate, http2=True, tls="", location="", locations=""):
        return f"""
    server {{
        listen {self.address[variant]}:443 ssl{" http2" if http2 else ""};
        server_name {" ".join(APPLE_HOSTS)};{tls}
        ssl_certificate {self.certs / (certificate + ".pem")};
        ssl_certificate_key {self.certs / (certificate + ".key")};{locations}
        location / {{{location}
            proxy_pass http://sandbox;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $host;
        }}
    }}"""

    def _config(self):
        temp = self.dir / "temp"
        temp.mkdir(exist_ok=True)
        servers = "".join([
            self._server("good", "good"),
            self._server("http1", "good", http2=False),
            self._server("expired", "expired"),
            self._server("self_signed", "self_signed"),
            self._server("wrong_host", "wrong_host"),
            self._server("other_ca", "other_ca"),
            self._server("tls11", "good", http2=False, tls="\n        ssl_protocols TLSv1.1;\n        ssl_ciphers DEFAULT:@SECLEVEL=0;"),
            self._server("weak_cipher", "good", tls="\n        ssl_protocols TLSv1.2;\n        ssl_ciphers ECDHE-ECDSA-AES128-SHA;"),
            self._server("goaway", "good", tls=f"\n        keepalive_requests {REQUESTS_BEFORE_GOAWAY};"),
            self._server("reset", "good", location="\n            if ($connection_requests = 1) { return 444; }"),
            self._server("reset_update", "good", locations="\n        location = /v1/update_two_bits { return 444; }"),
            self._server("few_streams", "good", tls=f"\n        http2_max_concurrent_streams {FEW_STREAMS};"),
        ])
        user = "user root;" if os.geteuid() == 0 else ""
        return f"""# Written by Tests/tls/fake_apple.py; nginx runs in the foreground as the test's own process.
daemon off;
{user}
worker_processes 1;
pid {self.dir / "nginx.pid"};
error_log {self.error_log} info;
events {{ worker_connections 4096; }}
http {{
    log_format fake '{LOG_FORMAT}';
    access_log {self.access_log} fake;
    client_body_temp_path {temp}/body;
    proxy_temp_path {temp}/proxy;
    fastcgi_temp_path {temp}/fastcgi;
    uwsgi_temp_path {temp}/uwsgi;
    scgi_temp_path {temp}/scgi;
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_session_cache shared:fake_apple:1m;
    http2_max_concurrent_streams {STREAMS_PER_CONNECTION};
    keepalive_requests 100000;
    keepalive_timeout 120s;
    upstream sandbox {{
        server {self.upstream};
        keepalive 64;
    }}{servers}
}}
"""

    def _start(self):
        config = self.dir / "nginx.conf"
        config.write_text(self._config())
        log = open(self.dir / "nginx.out", "ab")
        self.process = subprocess.Popen(["nginx", "-c", str(config), "-p", str(self.dir)], stdout=log, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, start_new_session=True)
        log.close()
        # The stalled handshake: the kernel completes TCP connections into the backlog, and nobody ever reads them.
        self.stall = socket.socket()
        self.stall.bind((self.address["stall"], 443))
        self.stall.listen(128)
        deadline = time.monotonic() + 15
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"nginx exited with {self.process.returncode}: {(self.dir / 'nginx.out').read_text()}"
                                   f"{self.error_log.read_text() if self.error_log.exists() else ''}")
            try:
                with socket.create_connection((self.address["good"], 443), timeout=1):
                    return
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("nginx did not listen within 15 s")
                time.sleep(0.05)

    def hosts_file(self, variant):
        """A hosts file mapping Apple's four names to `variant`'s address (localhost kept)."""
        path = self.dir / f"hosts-{variant}"
        path.write_text("127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n"
                        + "".join(f"{self.address[variant]} {host}\n" for host in APPLE_HOSTS))
        return path

    def log(self, address=None):
        """The requests nginx served (for `address`, a variant's, when given), oldest first."""
        if not self.access_log.exists():
            return []
        entries = [dict(zip(LOG_FIELDS, line.split())) for line in self.access_log.read_text().splitlines() if line.strip()]
        return [e for e in entries if address is None or e["server_addr"] == address]

    def stop(self):
        if self.stall is not None:
            self.stall.close()
            self.stall = None
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGQUIT)  # graceful: workers finish, then the master exits
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.process = None


def system_store(directory, ca_file):
    """A directory laid out as Debian's /etc/ssl/certs holding only `ca_file`'s certificates: the bundle
    (ca-certificates.crt, libcurl's CAINFO) and the hashed links (libcurl's CAPATH). Returns it."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copy(ca_file, directory / "ca-certificates.crt")
    shutil.copy(ca_file, directory / "test-ca.pem")
    subprocess.run(["openssl", "rehash", str(directory)], check=True, capture_output=True)
    return directory


def namespaced(argv, hosts_file, ca_store=None):
    """`argv` run in a private mount namespace whose /etc/hosts is `hosts_file` and, with `ca_store` (see
    `system_store`), whose /etc/ssl/certs is that directory: the operating system's trust store as that one process
    sees it, nothing changed outside it."""
    script = 'mount --bind "$1" /etc/hosts && { [ -z "$2" ] || mount --bind "$2" /etc/ssl/certs; } && shift 2 && exec "$@"'
    return ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", script, "sh", str(hosts_file), str(ca_store or ""), *map(str, argv)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", required=True, help="where the certificates, nginx's configuration and its logs go")
    parser.add_argument("--upstream", required=True, help="the sandbox, e.g. http://127.0.0.1:8081")
    args = parser.parse_args()
    fake = FakeApple(args.dir, args.upstream)
    print(f"CA file: {fake.ca_file}")
    for variant in VARIANTS:
        print(f"{variant:12} {fake.address[variant]}:443  hosts file: {fake.hosts_file(variant)}")
    print(f"access log: {fake.access_log}")
    try:
        signal.pause()
    except KeyboardInterrupt:
        pass
    finally:
        fake.stop()


if __name__ == "__main__":
    main()
