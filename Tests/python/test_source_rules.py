"""Rules of the source tree that the compiler does not check."""
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PRODUCT = REPO / "Sources"


def test_no_product_module_imports_full_foundation():
    # `import Foundation` links Foundation and ICU statically (+40 MB, docs/architecture.md, "One binary"):
    # the product uses FoundationEssentials, Dispatch and Glibc.
    offenders = []
    for path in PRODUCT.rglob("*.swift"):
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
