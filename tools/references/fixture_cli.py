"""The command line of the scripts that write one JSON file per case into tests/fixtures/hf/<case>/: write the files,
or with --check compare them with what the script makes now (and exit with the first that differs)."""

import argparse
import json
import os
import sys

from attnscope_tools.paths import ROOT

HF = os.path.join(ROOT, "tests", "fixtures", "hf")


def write_case_files(cases, make, file_name):
    """Runs make(case) for every case and writes (or with --check compares) HF/<case>/<file_name>."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true", help="compare with the files instead of writing")
    args = ap.parse_args()
    for case in cases:
        text = json.dumps(make(case), separators=(",", ":")) + "\n"
        path = os.path.join(HF, case["case"], file_name)
        if args.check:
            with open(path) as f:
                if f.read() != text:
                    sys.exit(f"{path}: differs from what the script makes")
        else:
            with open(path, "w") as f:
                f.write(text)
    print("ok" if args.check else "written")
