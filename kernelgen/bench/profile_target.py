"""The program ncu profiles: one call of a candidate at one benchmark shape.

    python -m kernelgen.bench.profile_target OP FILE SHAPE SEED

Run under `ncu --profile-from-start off` (kernelgen.bench.profile): the inputs are the bench's
first input set for that shape (same maker, same seed), the candidate is called twice outside
the profiled range (JIT compile and autotune are not what the agent asked about), then once
between cudaProfilerStart and cudaProfilerStop. It prints nothing on stdout, where ncu writes
its CSV; a failure is one 'profile_target:' line on stderr and exit code 1.
"""

from __future__ import annotations

import sys

WARMUP_CALLS = 2


def main(argv: list[str]) -> int:
    import torch

    from kernelgen.bench.contender import load_entry
    from kernelgen.bench.messages import select_shapes
    from kernelgen.spec import load_spec
    from kernelgen.spec.inputs import case_seed, make_inputs

    if len(argv) != 4:
        raise ValueError(f"expected OP FILE SHAPE SEED, got {argv}")
    op, source, shape_name, seed = argv[0], argv[1], argv[2], int(argv[3])
    spec = load_spec(op)
    (shape,) = select_shapes(spec, [shape_name])
    _, fn = load_entry(source, "kernelgen_profiled", spec.name)
    if isinstance(fn, str):
        raise RuntimeError(fn)
    args = make_inputs(
        spec, shape, shape.dtype, "normal", case_seed(seed, f"bench/{shape.name}/0"), "cuda"
    )
    with torch.no_grad():
        for _ in range(WARMUP_CALLS):
            fn(*args)
        torch.cuda.synchronize()
        torch.cuda.profiler.start()
        fn(*args)
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()
    return 0


if __name__ == "__main__":
    try:
        code = main(sys.argv[1:])
    except Exception as e:  # noqa: BLE001 - the caller reads this one line
        print(f"profile_target: {type(e).__name__}: {e}", file=sys.stderr)
        code = 1
    sys.stdout.flush()
    sys.exit(code)
