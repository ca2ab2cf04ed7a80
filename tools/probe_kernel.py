"""Device probe (issue 13): Futhark's own profile of one grouped call, and the host's share.

Makes a profiling context for fut/fast.fut by hand (futhark-ffi's module), uploads the arrays once,
calls grouped64/32 a few times, and prints the context's report: time per kernel and per copy.
"""
import sys
import time

import numpy as np
import trinom
from trinom import io
from trinom.engines import _futhark, futhark_fast


def main() -> None:
    name, target = sys.argv[1], sys.argv[2]
    portfolio, curve = io.read_input(f"data/{name}.in")
    curve = curve or trinom.YieldCurve.thesis()
    module = _futhark.load_module("fast", target)
    lib, ffi = module.lib, module.ffi
    config = lib.futhark_context_config_new()
    lib.futhark_context_config_set_profiling(config, 1)
    ctx = lib.futhark_context_new(config)
    for precision, real, ctype in (("f64", "f64", "double"), ("f32", "f32", "float")):
        start = time.perf_counter()
        (size, _rows), = futhark_fast.classes(portfolio, precision, target)
        arrays = _futhark.input_arrays(portfolio, curve, precision)
        host = time.perf_counter() - start
        handles = []
        start = time.perf_counter()
        for a in arrays:
            if a.dtype == np.int32:
                handles.append(lib.futhark_new_i32_1d(ctx, ffi.cast("int32_t *", a.ctypes.data), len(a)))
            else:
                handles.append(getattr(lib, f"futhark_new_{real}_1d")(ctx, ffi.cast(f"{ctype} *", a.ctypes.data), len(a)))
        lib.futhark_context_sync(ctx)
        upload = time.perf_counter() - start
        entry = getattr(lib, f"futhark_entry_grouped{precision[1:]}")
        out = ffi.new(f"struct futhark_{real}_1d **")
        times = []
        for _ in range(5):
            start = time.perf_counter()
            assert entry(ctx, out, size, *handles) == 0
            lib.futhark_context_sync(ctx)
            times.append(time.perf_counter() - start)
            result = np.empty(len(portfolio), dtype=arrays[0].dtype)
            getattr(lib, f"futhark_values_{real}_1d")(ctx, out[0], ffi.cast(f"{ctype} *", result.ctypes.data))
            lib.futhark_context_sync(ctx)
            getattr(lib, f"futhark_free_{real}_1d")(ctx, out[0])
        print(f"{name} {precision} {target}: host classes+arrays {1e3 * host:.2f} ms, upload {1e3 * upload:.2f} ms, "
              f"entry+sync {', '.join(f'{1e3 * t:.2f}' for t in times)} ms", flush=True)
    print(ffi.string(lib.futhark_context_report(ctx)).decode()[:6000])


if __name__ == "__main__":
    main()
