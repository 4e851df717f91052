"""Rules of the source tree that the compiler does not check."""
import functools
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PRODUCT = REPO / "Sources"
# The client library for iOS apps (docs/client.md) is not linked into the server's binary: on Apple platforms
# Foundation is the only Foundation there is, and its URLSession relay needs FoundationNetworking on Linux.
CLIENT = PRODUCT / "TwoBitsClient"


def test_no_product_module_imports_full_foundation():
    # `import Foundation` links Foundation and ICU statically (+40 MB, docs/architecture.md, "One binary"):
    # the product uses FoundationEssentials, Dispatch and Glibc.
    offenders = []
    for path in PRODUCT.rglob("*.swift"):
        if CLIENT in path.parents:
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if re.match(r"^\s*(@\w+\s+)*(public |package |internal |private |fileprivate )?import\s+(Foundation|FoundationNetworking|FoundationXML|FoundationInternationalization)\s*$", line):
                offenders.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert not offenders, "\n".join(offenders)


def test_every_mutant_still_applies_to_todays_code():
    # A mutant whose `find` no longer occurs is reported "broken" only when someone runs `make mutate`:
    # two such entries went unnoticed for a week. Caught here, in every `make test`.
    import json
    problems = []
    for catalogue in sorted((REPO / "Tests" / "mutation").glob("*.json")):
        for entry in json.loads(catalogue.read_text()):
            target = REPO / entry["file"]
            count = target.read_text().count(entry["find"]) if target.is_file() else -1
            if count != 1:
                problems.append(f"{catalogue.name}: {entry['id']}: find occurs {count} times in {entry['file']}")
    assert not problems, "\n".join(problems)


def test_make_fuzz_runs_every_fuzz_target(tmp_path):
    # `make fuzz` ran six of the seven targets for weeks (FuzzAppAttest was missing from run.sh's list). Its
    # default list is now derived from Tests/Fuzz/Sources; this runs run.sh with a stand-in `swift` whose
    # "targets" only record that they ran, so nothing is built or fuzzed.
    import os
    import subprocess
    fuzz = REPO / "Tests" / "Fuzz"
    targets = sorted(p.name for p in (fuzz / "Sources").iterdir() if p.is_dir() and p.name.startswith("Fuzz") and p.name != "FuzzDriver")
    assert "FuzzAppAttest" in targets and len(targets) >= 7, targets
    bin_dir, tools, ran = tmp_path / "bin", tmp_path / "tools", tmp_path / "ran"
    bin_dir.mkdir()
    tools.mkdir()
    (tools / "swift").write_text(f'#!/bin/sh\ncase "$*" in *--show-bin-path*) echo "{bin_dir}";; esac\nexit 0\n')
    (tools / "swift").chmod(0o755)
    for name in targets:
        (bin_dir / name).write_text(f'#!/bin/sh\necho {name} >> "{ran}"\n')
        (bin_dir / name).chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "FUZZ_TARGETS"}
    env.update(PATH=f"{tools}:{env['PATH']}", FUZZ_SECONDS="1", FUZZ_SCRATCH=str(tmp_path / "scratch"))
    result = subprocess.run(["bash", str(fuzz / "run.sh")], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert sorted(ran.read_text().split()) == targets, result.stdout
    # Each target is also a product of the fuzz package and has its seed corpus.
    package = (fuzz / "Package.swift").read_text()
    for name in targets:
        assert f'"{name}"' in package, f"{name} is not a target of Tests/Fuzz/Package.swift"
        assert (fuzz / "Corpus" / name).is_dir(), f"{name} has no Tests/Fuzz/Corpus/{name}"


# --- The layers (docs/architecture.md, "Targets and their dependencies"), as Package.swift declares them. ---

# The C and OS modules each product target (Sources/) may import: C only in the thin wrappers, and no
# Foundation beyond FoundationEssentials (the rule above). A new target gets a line here.
OS = {"Glibc", "Darwin"}
ALLOWED_SYSTEM_IMPORTS = {
    # TwoBits' own C (C targets: no Swift, so nothing to import; their headers include their library's).
    "COpenSSLShims": set(),
    "CCurlShims": set(),
    "CMicroHTTPDShims": set(),
    "CSQLiteShims": set(),
    "CEventLoop": set(),
    "CBuildInfo": set(),
    "Locking": {"CEventLoop"} | OS,
    # The small mechanisms (retry queue, token bucket, back-off, Duration's conversions): the standard library alone.
    "Mechanisms": set(),
    "EventLoops": {"CEventLoop", "Dispatch"} | OS,
    # The wire's vocabulary, shared with the client library: the Swift standard library alone.
    "WireVocabulary": set(),
    # The domain's values (bits, months, environments), below the ledger: the Swift standard library alone.
    "DeviceDomain": set(),
    "WireFormats": {"FoundationEssentials"},
    "TwoBitsCrypto": {"COpenSSL", "FoundationEssentials", "Synchronization"} | OS,
    "OutboundHTTP": {"CCurl", "FoundationEssentials"} | OS,
    "HTTPServer": {"CMicroHTTPD", "FoundationEssentials"} | OS,
    "Ledger": {"FoundationEssentials"},
    "SQLiteLedger": {"CSQLite", "Dispatch", "FoundationEssentials"} | OS,
    "PostgresLedger": {"CPostgres", "Dispatch", "FoundationEssentials"} | OS,
    "DeviceCheckModel": {"FoundationEssentials"},
    "AppAttestFormats": {"FoundationEssentials"},
    "AppleDeviceCheckClient": {"FoundationEssentials"},
    "Sandbox": {"FoundationEssentials"},
    "Policy": {"FoundationEssentials"},
    "TokenSigning": {"FoundationEssentials", "Glibc"},
    "AppAttest": {"FoundationEssentials"},
    "UseCases": {"FoundationEssentials", "Glibc"},
    "TwoBitsService": {"FoundationEssentials", "Glibc", "Synchronization"},
    "twobits": {"CBuildInfo", "Dispatch", "FoundationEssentials", "Glibc"},
    # The app's library, never linked into the server: full Foundation, and Apple's frameworks on Apple platforms
    # (test_the_client_library_imports_no_module_of_the_server holds those behind #if).
    "TwoBitsClient": {"Foundation", "FoundationEssentials", "FoundationNetworking", "DeviceCheck", "Security", "CryptoKit",
                      "COpenSSL"},
}

# What the domain layers never reach, even transitively: curl, MHD, the databases, and the Apple client.
IO = {"OutboundHTTP", "HTTPServer", "CCurl", "CMicroHTTPD", "CSQLite", "CPostgres", "SQLiteLedger", "PostgresLedger",
      "AppleDeviceCheckClient", "CCurlShims", "CMicroHTTPDShims", "CSQLiteShims"}
FORBIDDEN_DEPENDENCIES = {
    "DeviceCheckModel": IO | {"EventLoops"},
    "Policy": IO,
    "UseCases": IO,
    # The sandbox is a server (HTTPServer over MHD), and stands in for Apple without the client, and without App
    # Attest's verifiers: what it shares with them is the formats below both.
    "Sandbox": IO - {"HTTPServer", "CMicroHTTPD", "CMicroHTTPDShims"} | {"AppAttest"},
    # What an App Attest verifier and an emulator of Apple both read and write: no I/O, no verifier, no emulator.
    "AppAttestFormats": IO | {"EventLoops", "AppAttest", "Sandbox"},
}

# The wire's vocabulary (error codes, reasons, tiers, field names, base64url) sits below every layer, the
# client library's included: it depends on nothing, so an app that links it links nothing of the server.
VOCABULARY = "WireVocabulary"
# The client library's only dependencies: the vocabulary, and the OS's libcrypto on Linux.
CLIENT_DEPENDENCIES = {VOCABULARY, "COpenSSL"}

# The domain's values sit below the ledger that stores them typed: they depend on nothing (no crypto, no Foundation),
# and the ledger's records reach them without reaching Apple's API model or libcrypto.
DOMAIN = "DeviceDomain"
BELOW_THE_DOMAIN_MODEL = {"Ledger": {"DeviceCheckModel", "TwoBitsCrypto", "COpenSSL"}}

# Only the composition root and the CLI build the Apple client.
MAY_DEPEND_ON_THE_CLIENT = {"TwoBitsService", "twobits"}

# Apple's frameworks (and the toolchain's own modules): a module of ours with one of these names cannot be
# imported beside it (an app importing Apple's DeviceCheck and ours could not build).
APPLE_MODULES = {
    "Accelerate", "AppIntents", "AppKit", "AppTrackingTransparency", "ARKit", "AuthenticationServices", "AVFoundation",
    "BackgroundTasks", "CallKit", "CloudKit", "Combine", "Compression", "Contacts", "CoreBluetooth", "CoreData",
    "CoreFoundation", "CoreGraphics", "CoreLocation", "CoreML", "CoreMotion", "CoreTelephony", "CryptoKit",
    "CryptoTokenKit", "Darwin", "DeviceCheck", "Dispatch", "EventKit", "Foundation", "FoundationEssentials",
    "FoundationNetworking", "GameKit", "HealthKit", "ImageIO", "Intents", "LocalAuthentication", "MapKit", "MessageUI",
    "Metal", "Network", "NetworkExtension", "ObjectiveC", "Observation", "os", "PassKit", "Photos", "PushKit",
    "QuartzCore", "SafariServices", "Security", "StoreKit", "SwiftData", "SwiftUI", "Synchronization",
    "SystemConfiguration", "Testing", "UIKit", "UserNotifications", "Vision", "WebKit", "WidgetKit", "XCTest",
}

IMPORT = re.compile(r"^\s*(?:@[\w(): ,]+\s+)*(?:public |package |internal |private |fileprivate )?import\s+"
                    r"(?:(?:struct|class|enum|protocol|func|var|let|typealias)\s+)?([A-Za-z_]\w*)", re.M)


@functools.cache
def package():
    """`swift package describe --type json`: the targets, their paths and declared dependencies."""
    swift = shutil.which("swift")
    if swift is None:
        pytest.skip("needs the Swift toolchain (swift package describe)")
    done = subprocess.run([swift, "package", "describe", "--type", "json"], cwd=REPO, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def targets():
    return {t["name"]: t for t in package()["targets"]}


def declared(name):
    return set(targets()[name].get("target_dependencies") or [])


def closure(name):
    seen, todo = set(), [name]
    while todo:
        for dependency in declared(todo.pop()) - seen:
            seen.add(dependency)
            todo.append(dependency)
    return seen


def product_targets():
    """The targets of the product and its benchmarks: not tests, test support or C modules."""
    return {n: t for n, t in targets().items()
            if t["type"] in ("library", "executable") and not t["path"].startswith("Tests/")}


def test_no_target_is_named_like_an_apple_framework():
    apple = {m.lower() for m in APPLE_MODULES}
    clashes = sorted(n for n in targets() if n.lower() in apple)
    assert not clashes, f"targets named like an Apple framework: {clashes}"


def test_domain_layers_never_depend_on_io_even_transitively():
    problems = [f"{n} reaches {sorted(closure(n) & forbidden)}"
                for n, forbidden in FORBIDDEN_DEPENDENCIES.items() if closure(n) & forbidden]
    assert not problems, "\n".join(problems)


def test_the_wire_vocabulary_depends_on_nothing_and_the_client_on_it_alone():
    assert declared(VOCABULARY) == set(), f"{VOCABULARY} depends on {sorted(declared(VOCABULARY))}"
    assert VOCABULARY in declared("TwoBitsClient")
    assert declared("TwoBitsClient") <= CLIENT_DEPENDENCIES, sorted(declared("TwoBitsClient") - CLIENT_DEPENDENCIES)


def test_the_domain_depends_on_nothing_and_the_ledger_types_its_records_with_it():
    assert declared(DOMAIN) == set(), f"{DOMAIN} depends on {sorted(declared(DOMAIN))}"
    for name, forbidden in BELOW_THE_DOMAIN_MODEL.items():
        assert DOMAIN in declared(name), f"{name} does not depend on {DOMAIN}"
        assert not closure(name) & forbidden, f"{name} reaches {sorted(closure(name) & forbidden)}"


def test_only_the_composition_root_and_the_cli_depend_on_the_apple_client():
    dependents = {n for n in product_targets() if "AppleDeviceCheckClient" in declared(n)}
    assert dependents <= MAY_DEPEND_ON_THE_CLIENT, sorted(dependents - MAY_DEPEND_ON_THE_CLIENT)


def test_each_product_target_imports_only_its_allowed_c_and_os_modules():
    ours = {n for n, t in targets().items() if t["type"] != "system-target"}
    problems = []
    for name, target in sorted(product_targets().items()):
        if not target["path"].startswith("Sources/"):
            continue
        if name not in ALLOWED_SYSTEM_IMPORTS:
            problems.append(f"{name}: no line in ALLOWED_SYSTEM_IMPORTS (say which C and OS modules it may import)")
            continue
        for path in sorted((REPO / target["path"]).rglob("*.swift")):
            for module in IMPORT.findall(path.read_text()):
                if module not in ours and module not in ALLOWED_SYSTEM_IMPORTS[name]:
                    problems.append(f"{path.relative_to(REPO)}: {name} may not import {module}")
    assert not problems, "\n".join(problems)


def architecture_diagram():
    """Each `Name (Dep, Dep)` line of the diagram in docs/architecture.md whose Name is a product target."""
    text = (REPO / "docs" / "architecture.md").read_text()
    section = text.split("## Targets and their dependencies", 1)[1]
    diagram = section.split("```", 2)[1]
    names = product_targets()
    entries = {}
    for line in diagram.splitlines():
        match = re.match(r"^\s+([A-Za-z0-9]+) \(([^)]*)\)", line)
        if match and match.group(1) in names:
            assert match.group(1) not in entries, f"{match.group(1)} appears twice in the diagram"
            entries[match.group(1)] = {d.strip() for d in match.group(2).split(",") if d.strip()}
    return entries


def test_the_architecture_diagram_states_each_targets_dependencies_as_package_swift_does():
    diagram = architecture_diagram()
    problems = [f"{n}: missing from docs/architecture.md's diagram" for n in sorted(product_targets()) if n not in diagram]
    for name, dependencies in sorted(diagram.items()):
        if dependencies != declared(name):
            problems.append(f"{name}: the diagram says {sorted(dependencies)}, Package.swift {sorted(declared(name))}")
    assert not problems, "\n".join(problems)


def test_the_client_library_imports_no_module_of_the_server():
    # docs/client.md: an app depends on TwoBitsClient alone; Package.swift gives it no dependency but the OS's
    # libcrypto on Linux (COpenSSL, for SHA-256 where the tests run), and a build directory shared with the server
    # would still let `import Policy` (or the server's DeviceCheck module, which is why Apple's is imported under
    # os(iOS) || os(macOS)) compile by accident.
    allowed = {"Foundation", "FoundationEssentials", "FoundationNetworking", "DeviceCheck", "Security", "CryptoKit", "COpenSSL",
               VOCABULARY}
    offenders = []
    for path in CLIENT.rglob("*.swift"):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            found = re.match(r"^\s*(@\w+\s+)*(public |package |internal |private |fileprivate )?import\s+(\w+)", line)
            if found and found.group(3) not in allowed:
                offenders.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
            if found and found.group(3) in {"DeviceCheck", "Security", "CryptoKit"} and "(os(iOS) || os(macOS))" not in path.read_text():
                offenders.append(f"{path.relative_to(REPO)}:{number}: Apple's framework outside #if ... (os(iOS) || os(macOS))")
            if found and found.group(3) == "COpenSSL" and "#elseif os(Linux)" not in path.read_text():
                offenders.append(f"{path.relative_to(REPO)}:{number}: libcrypto outside #elseif os(Linux) (an app links none)")
    assert not offenders, "\n".join(offenders)


# --- One wire vocabulary (issue 42, item 3): each code and reason is spelled once, in Sources/WireVocabulary. ---

VOCABULARY_SOURCES = PRODUCT / VOCABULARY
# Declared in the vocabulary but never sent: no client sees it, and the word is common elsewhere.
NOT_ON_THE_WIRE = {"cancelled"}
# Literals equal to a code that are not the wire's code, and why each may stay.
CODE_LITERALS_ALLOWED = {
    # The Apple client's metric outcome labels for Apple's answers (twobits_apple_calls_total), not envelope codes.
    ("Sources/AppleDeviceCheckClient/Client/AppleDeviceCheckClient.swift", "not_found"),
    ("Sources/AppleDeviceCheckClient/Client/AppleDeviceCheckClient.swift", "invalid_device_token"),
    # The sandbox's own control API names its injected faults (/sandbox/v1, docs/sandbox.md); two are named
    # after the reason they make the server answer.
    ("Sources/Sandbox/AppAttest/AppAttestFault.swift", "bad_chain"),
    ("Sources/Sandbox/AppAttest/AppAttestFault.swift", "bad_signature"),
}


def vocabulary_codes():
    """The error codes, App Attest refusal reasons and request-proof reasons, read from the vocabulary's source."""
    codes = set()
    for path in VOCABULARY_SOURCES.glob("*.swift"):
        text = path.read_text()
        codes |= set(re.findall(r'(?:APIErrorCode|AppAttestRefusalReason|RequestProofRefusalReason)\(rawValue: "([a-z0-9_]+)"\)', text))
        if path.name == "AppAttestFailureReason.swift":
            codes |= set(re.findall(r'case \w+ = "([a-z0-9_]+)"', text))
    return codes - NOT_ON_THE_WIRE


def test_the_vocabulary_reader_finds_the_codes():
    codes = vocabulary_codes()
    assert {"bad_request", "confirmation_mismatch", "length_required", "key_revoked", "bad_chain"} <= codes, sorted(codes)
    assert len(codes) >= 50, len(codes)


def test_no_error_code_or_reason_is_spelled_outside_the_vocabulary():
    # A code written as a literal at a throw site drifts from the client's (and the document's) unseen; written
    # as `APIErrorCode.x` it is the one the client matches. Comments, tests and the console's JS may name codes.
    literal = re.compile(r'"(%s)"' % "|".join(sorted(vocabulary_codes(), key=len, reverse=True)))
    offenders = []
    for path in sorted(PRODUCT.rglob("*.swift")):
        if VOCABULARY_SOURCES in path.parents:
            continue
        relative = str(path.relative_to(REPO))
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if line.lstrip().startswith("//"):
                continue
            for found in literal.finditer(line):
                if (relative, found.group(1)) not in CODE_LITERALS_ALLOWED:
                    offenders.append(f"{relative}:{number}: \"{found.group(1)}\" (use WireVocabulary's value)")
    assert not offenders, "\n".join(offenders)


def test_no_target_but_the_vocabulary_declares_base64url():
    # One base64url for the server and the client (WireFormats' Data extension calls it).
    copies = [str(p.relative_to(REPO)) for p in PRODUCT.rglob("*.swift")
              if VOCABULARY_SOURCES not in p.parents and re.search(r"^\s*(public |internal |private |fileprivate )?(enum|struct) Base64URL\b", p.read_text(), re.M)]
    assert not copies, copies


# --- Rules as values, use cases as the only orchestrators. ---

POLICY_SOURCES = PRODUCT / "Policy"
CONTROLLERS = PRODUCT / "TwoBitsService" / "Controllers"
# In Policy, each of these is I/O, or a clock or randomness the rules would read by themselves: the use cases
# read (Apple, the stores, the time) and hand the rules what they read.
POLICY_FORBIDDEN = {
    r"\basync\b": "an async function (every read or write is a use case's)",
    r"\bawait\b": "an await",
    r"\bDeviceCheckAPI\b": "Apple's client protocol",
    r"\bDate\(\)": "the clock (take the month or the time as an argument)",
    r"\bYearMonth\(containing:": "the clock's month (take the month as an argument)",
    r"\bSecureRandom\b": "randomness (take the id as an argument)",
    r"\bTask\b": "a task",
}
# In a controller, each of these is the rules or Apple reached past the use cases.
CONTROLLER_FORBIDDEN = {
    r"\bBitPolicy\b": "the old policy engine",
    r"\bBitRules\b": "the rules (a use case applies them)",
    r"\bWritePlan\b": "a write plan (a use case carries it out)",
    r"\bDeviceBits\b": "the device's bits (a use case reads and writes them)",
    r"\bDeviceCheckAPI\b": "Apple's client",
}


def store_protocols():
    """The ledger's store protocols (Sources/Ledger/Stores and the composed `Ledger`)."""
    names = {"Ledger"}
    for path in (PRODUCT / "Ledger" / "Stores").glob("*.swift"):
        names |= set(re.findall(r"^public protocol (\w+)", path.read_text(), re.M))
    return names


def code_lines(path):
    """(number, line) of a Swift file, comments removed (`//` to the end of the line), imports left out (the
    module `Ledger` is named as its composed store protocol is)."""
    for number, line in enumerate(path.read_text().splitlines(), 1):
        code = line.split("//", 1)[0]
        if not IMPORT.match(code):
            yield number, code


def offending_lines(root, forbidden):
    offenders = []
    for path in sorted(root.rglob("*.swift")):
        for number, code in code_lines(path):
            for pattern, what in forbidden.items():
                if re.search(pattern, code):
                    offenders.append(f"{path.relative_to(REPO)}:{number}: {what}: {code.strip()}")
    return offenders


def test_the_store_protocol_reader_finds_the_stores():
    assert {"AuditLog", "WriteIntentStore", "PendingOrderStore", "AppAttestKeyStore", "Ledger"} <= store_protocols()


def test_policy_is_values_and_pure_functions():
    # Policy may use the ledger's record types (AuditEvent, WriteIntent, PendingDeviceAction) as values, never a
    # store: a rule that could read or write would hide a use case's I/O inside a decision.
    forbidden = dict(POLICY_FORBIDDEN)
    forbidden.update({rf"\b{name}\b": f"the store protocol {name}" for name in store_protocols()})
    offenders = offending_lines(POLICY_SOURCES, forbidden)
    assert not offenders, "Policy must stay pure (values in, decisions out):\n" + "\n".join(offenders)


def test_controllers_call_use_cases_only():
    # A controller parses the request, calls a use case, maps its answer onto HTTP; Policy's types (its errors,
    # the layout, a device's meaning) may be mapped, its rules and Apple's client are the use cases' to call.
    offenders = offending_lines(CONTROLLERS, CONTROLLER_FORBIDDEN)
    assert not offenders, "controllers call use cases only:\n" + "\n".join(offenders)


def test_the_purity_rules_see_what_they_forbid(tmp_path):
    # The readers of both rules, on a doctored file: what they flag, and that a comment is not code.
    path = tmp_path / "A.swift"
    path.write_text("// async, await, DeviceCheckAPI, Date(), BitRules: only named in a comment\nimport Ledger\n"
                    "func f(_ log: any AuditLog) async -> Date { Date() }\n"
                    "let rules = BitRules(configuration: .standard)\n")
    forbidden = dict(POLICY_FORBIDDEN)
    forbidden[r"\bAuditLog\b"] = "the store protocol AuditLog"
    saved = globals()["REPO"]
    globals()["REPO"] = tmp_path
    try:
        policy = offending_lines(tmp_path, forbidden)
        controllers = offending_lines(tmp_path, CONTROLLER_FORBIDDEN)
    finally:
        globals()["REPO"] = saved
    assert [line.split(": ")[1] for line in policy] == ["an async function (every read or write is a use case's)",
                                                         "the clock (take the month or the time as an argument)",
                                                         "the store protocol AuditLog"], policy
    assert all(line.startswith("A.swift:3:") for line in policy), policy
    assert [line.split(":")[1] for line in controllers] == ["4"], controllers


# --- Tests mirror the sources (issue 33, item 7). ---

# Product targets whose tests live in a test target named otherwise, and why that home is right. A new product
# target gets `<Name>Tests` or a line here.
TESTED_ELSEWHERE = {
    # One contract, the same cases over both ledgers (and the seam's row mapping), in one target: a case
    # written once runs against each ledger, so it cannot drift between them.
    "Ledger": "LedgerContractTests",
    "SQLiteLedger": "LedgerContractTests",
    "PostgresLedger": "LedgerContractTests",
    # The service is tested through the real service (UseCaseMappingTests, HTTPCoreTests, …).
    "TwoBitsService": "ServiceTests",
    # The executable: the Python end-to-end suites run the binary itself.
    "twobits": "Tests/python",
}


def _package_targets():
    package = (REPO / "Package.swift").read_text()
    return re.findall(r'\.(target|executableTarget|testTarget)\(name: "(\w+)"(?:[^)]*?path: "([^"]+)")?', package)


def test_each_product_target_has_a_test_target():
    targets = _package_targets()
    tests = {name for kind, name, _ in targets if kind == "testTarget"}
    products = {name for kind, name, path in targets
                if kind in ("target", "executableTarget") and not path and (PRODUCT / name).is_dir()
                and any((PRODUCT / name).rglob("*.swift"))}
    missing = []
    for name in sorted(products):
        home = f"{name}Tests" if f"{name}Tests" in tests else TESTED_ELSEWHERE.get(name)
        if home is None or (home not in tests and not (REPO / home).is_dir()):
            missing.append(f"{name}: no {name}Tests and no line in TESTED_ELSEWHERE")
    assert not missing, "\n".join(missing)
    stale = sorted(set(TESTED_ELSEWHERE) - products)
    assert not stale, f"TESTED_ELSEWHERE names targets that are no product targets: {stale}"
    redundant = sorted(name for name in TESTED_ELSEWHERE if f"{name}Tests" in tests)
    assert not redundant, f"TESTED_ELSEWHERE names targets that have a test target of their own: {redundant}"


def test_suites_share_their_harness_through_test_support():
    # The sandbox and service harnesses live once, in Tests/TestSupport; a suite that copies one back fails here.
    copies = []
    for path in (REPO / "Tests").rglob("*.swift"):
        if "TestSupport" in path.parts or "Fuzz" in path.parts:
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if re.match(r"^\s*(final class|struct) (ServiceHarness|SandboxHarness|TestClock)\b", line) and "    final class TestClock" not in line:
                copies.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert not copies, "\n".join(copies)


# --- `@unchecked Sendable`: few, and each says why it is sound. ---

UNCHECKED_SENDABLE = re.compile(r"@unchecked\s+Sendable")
# The most unconditional `@unchecked Sendable` conformances in Sources/ (a `where` clause, as Lock's over a
# Sendable state, is conditional). Each is a place ThreadSanitizer must see and a reader must trust.
MAX_UNCHECKED_SENDABLE = 10


def unchecked_sendables():
    """(path, line number, line, justified) for each `@unchecked Sendable` in Sources/ outside comments."""
    found = []
    for path in sorted((REPO / "Sources").rglob("*.swift")):
        lines = path.read_text().splitlines()
        for index, line in enumerate(lines):
            code = line.split("//", 1)[0]
            if not UNCHECKED_SENDABLE.search(code):
                continue
            # The justification: `// Unchecked: why` on the line, or in the comment block right above it.
            justified = "// Unchecked:" in line
            above = index - 1
            while not justified and above >= 0 and lines[above].strip().startswith("//"):
                justified = lines[above].strip().startswith("// Unchecked:")
                above -= 1
            found.append((path.relative_to(REPO), index + 1, line.strip(), justified))
    return found


def swift_files_without_code(root):
    """The Swift files under `root` with nothing but blank lines and comments: a file a move left behind."""
    empty = []
    for path in sorted(root.rglob("*.swift")):
        if ".build" in path.parts:
            continue
        if not any(line.strip() and not line.strip().startswith("//") for line in path.read_text().splitlines()):
            empty.append(path)
    return empty


def test_no_swift_file_is_left_empty(tmp_path):
    # An empty source file compiles, says nothing, and FoundationEssentials leaks 4 KiB reading one (the
    # documentation suite reads every source): LeakSanitizer failed `make sanitize` on one on 2026-12-02.
    assert [p.relative_to(REPO) for p in swift_files_without_code(REPO / "Sources")] == []
    assert [p.relative_to(REPO) for p in swift_files_without_code(REPO / "Tests")] == []
    (tmp_path / "Kept.swift").write_text("// A comment.\nlet kept = 1\n")
    (tmp_path / "Left.swift").write_text("")
    (tmp_path / "OnlyComments.swift").write_text("// Moved to Elsewhere.swift.\n\n")
    assert [p.name for p in swift_files_without_code(tmp_path)] == ["Left.swift", "OnlyComments.swift"]


def test_unchecked_sendable_is_rare_and_each_is_justified():
    found = unchecked_sendables()
    unconditional = [f for f in found if not re.search(r"\bwhere\b", f[2])]
    assert len(unconditional) <= MAX_UNCHECKED_SENDABLE, (
        f"{len(unconditional)} unconditional @unchecked Sendable in Sources/ (at most {MAX_UNCHECKED_SENDABLE}):\n"
        + "\n".join(f"{p}:{n}: {line}" for p, n, line, _ in unconditional))
    unjustified = [f"{p}:{n}: {line}" for p, n, line, justified in found if not justified]
    assert not unjustified, "an @unchecked Sendable without a `// Unchecked: why` comment on or right above it:\n" + "\n".join(unjustified)


def test_the_unchecked_sendable_rule_sees_a_conformance_and_its_justification(tmp_path):
    # The reader of the rule, on a doctored tree: what it counts, and what it takes as a justification.
    global REPO
    sources = tmp_path / "Sources" / "X"
    sources.mkdir(parents=True)
    (sources / "A.swift").write_text(
        "// Unchecked: only touched under its lock.\nfinal class A: @unchecked Sendable {}\n"
        "/// Docs.\nfinal class B: @unchecked Sendable {}\n"
        "struct C: @unchecked Sendable {} // Unchecked: immutable.\n"
        "// final class D: @unchecked Sendable {}\n"
        "extension E: @unchecked Sendable where T: Sendable {}\n")
    saved, REPO = REPO, tmp_path
    try:
        found = {line.split(":")[0]: justified for _, _, line, justified in unchecked_sendables()}
    finally:
        REPO = saved
    assert found == {"final class A": True, "final class B": False, "struct C": True, "extension E": False}


# --- The domain's values (issue 42, item 2): each spelled once, in the file that owns it. ---

# The file that declares each kind of domain value: its words are the enum's raw values (`case x = "y"`, or a
# bare `case x`), read from the file itself.
DOMAIN_VALUE_OWNERS = {
    "environment": PRODUCT / "DeviceDomain" / "AppleEnvironment.swift",
    "audit action": PRODUCT / "Ledger" / "Audit" / "AuditAction.swift",
}
# Literals equal to a domain value that are another vocabulary's word, and why each may stay. Tests, docs and the
# console's assets are not scanned: they name values as a reader would.
DOMAIN_LITERALS_ALLOWED = {
    # Field 7 of Apple's receipts says "production" or "sandbox": Apple's receipt vocabulary, not the environment's
    # name (a development key's receipt says "sandbox"); the verifier checks it and the sandbox writes it.
    ("Sources/AppAttest/Attestation/AttestationReceiptCheck.swift", "production"),
    ("Sources/Sandbox/AppAttest/SimulatedAppAttestKey.swift", "production"),
    ("Sources/Sandbox/Apple/AppleSandbox+AttestationData.swift", "production"),
    ("Sources/Sandbox/Receipts/SimulatedAppAttestKey+Receipts.swift", "production"),
    # The name of the iOS 27 validation category 3, shown by the admin API and the CLI.
    ("Sources/AppAttestFormats/AuthenticatorData/ValidationCategory.swift", "development"),
    # twobits_manual_bans_total's `action` label (docs/operations.md), not the audit trail's action.
    ("Sources/TwoBitsService/Controllers/AdminController.swift", "ban"),
    ("Sources/TwoBitsService/Controllers/AdminController.swift", "unban"),
    # The CLI's subcommands, `twobits admin ban|unban`.
    ("Sources/twobits/Commands/AdminCommand.swift", "ban"),
    ("Sources/twobits/Commands/AdminCommand.swift", "unban"),
}


def domain_values():
    """Each domain value's word → its kind, read from the owning files."""
    words = {}
    for kind, path in DOMAIN_VALUE_OWNERS.items():
        for name, raw in re.findall(r'^\s*case (\w+)(?: = "([^"]+)")?\s*$', path.read_text(), re.M):
            words[raw or name] = kind
    return words


def domain_literal_offenders(root, repo=None):
    words = domain_values()
    literal = re.compile(r'"(%s)"' % "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)))
    owners = set(DOMAIN_VALUE_OWNERS.values())
    offenders = []
    for path in sorted(root.rglob("*.swift")):
        if path in owners:
            continue
        relative = str(path.relative_to(repo or REPO))
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if line.lstrip().startswith("//"):
                continue
            for found in literal.finditer(line):
                if (relative, found.group(1)) not in DOMAIN_LITERALS_ALLOWED:
                    offenders.append(f"{relative}:{number}: \"{found.group(1)}\" (an {words[found.group(1)]}: use its type's value)")
    return offenders


def test_the_domain_value_reader_finds_the_values():
    words = domain_values()
    assert {"production", "development"} == {w for w, k in words.items() if k == "environment"}, words
    assert {"promotion.claim", "ban", "unban.applied", "app_attest.proof_refused"} <= set(words), words
    assert len([w for w, k in words.items() if k == "audit action"]) >= 17, words


def test_no_domain_value_is_spelled_outside_the_file_that_owns_it():
    # An environment or audit action written as a literal drifts from its type unseen (a typo records an action
    # no filter finds); written as `AppleEnvironment.production` or `AuditAction.ban` it is the type's own.
    offenders = domain_literal_offenders(PRODUCT)
    assert not offenders, "\n".join(offenders)
    stale = sorted(f"{p}: {w}" for p, w in DOMAIN_LITERALS_ALLOWED if f'"{w}"' not in (REPO / p).read_text())
    assert not stale, f"DOMAIN_LITERALS_ALLOWED names literals that are gone: {stale}"


def test_the_domain_literal_rule_sees_a_planted_literal(tmp_path):
    # The reader of the rule, on a doctored tree: a literal in code is found, one in a comment is not, and an
    # allowance holds for its own file only.
    policy = tmp_path / "Sources" / "Policy"
    policy.mkdir(parents=True)
    (policy / "Planted.swift").write_text('// "ban.applied" in a comment is fine\nlet action = "ban.applied"\nlet environment = "development"\n'
                                          'let receipt = "production"\n')
    offenders = domain_literal_offenders(tmp_path / "Sources", repo=tmp_path)
    assert offenders == ['Sources/Policy/Planted.swift:2: "ban.applied" (an audit action: use its type\'s value)',
                         'Sources/Policy/Planted.swift:3: "development" (an environment: use its type\'s value)',
                         'Sources/Policy/Planted.swift:4: "production" (an environment: use its type\'s value)'], offenders
