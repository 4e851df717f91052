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
