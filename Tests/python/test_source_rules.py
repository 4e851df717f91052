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
