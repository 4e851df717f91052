"""Rules of the source tree that the compiler does not check."""
import re
from pathlib import Path

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


def test_the_client_library_imports_no_module_of_the_server():
    # docs/client.md: an app depends on TwoBitsClient alone; Package.swift gives it no dependency, and a
    # build directory shared with the server would still let `import Policy` (or the server's DeviceCheck
    # module, which is why Apple's is imported under os(iOS) || os(macOS)) compile by accident.
    allowed = {"Foundation", "FoundationEssentials", "FoundationNetworking", "DeviceCheck", "Security"}
    offenders = []
    for path in CLIENT.rglob("*.swift"):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            found = re.match(r"^\s*(@\w+\s+)*(public |package |internal |private |fileprivate )?import\s+(\w+)", line)
            if found and found.group(3) not in allowed:
                offenders.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
            if found and found.group(3) in {"DeviceCheck", "Security"} and "(os(iOS) || os(macOS))" not in path.read_text():
                offenders.append(f"{path.relative_to(REPO)}:{number}: Apple's framework outside #if ... (os(iOS) || os(macOS))")
    assert not offenders, "\n".join(offenders)
