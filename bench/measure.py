"""What the paired benchmarks share: running tm-load, and pairing each figure with its
reference measured right beside it."""

import json
import pathlib
import subprocess

LOAD = str(pathlib.Path(__file__).resolve().parent.parent / "build" / "bin" / "tm-load")


def load(*args):
    """tm-load's JSON summary of one run."""
    out = subprocess.run([LOAD, *map(str, args)], check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def paired(measure, reference, rounds=5):
    """Figure and reference alternate `rounds` times (each called with the round number);
    the round with the median ratio is reported, with the ratios' range."""
    pairs = []
    for i in range(rounds):
        ref = reference(i)
        got = measure(i)
        pairs.append((got, ref))
    ratios = sorted(g / r for g, r in pairs)
    mid = ratios[len(ratios) // 2]
    got, ref = next(p for p in pairs if p[0] / p[1] == mid)
    return {"value": got, "reference": ref, "ratio": mid, "min": ratios[0], "max": ratios[-1]}
