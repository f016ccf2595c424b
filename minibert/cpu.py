"""The machine a figure was measured on, in one line: CPU model, vector ISA and cores.

Speed differs several-fold between machines this project runs on (NumPy's sgemm runs about 2.5x faster with
AVX-512 than with AVX2 alone), so every benchmark prints this line beside its figures (bench/cpu.py), and
every experiment stores it with its results (minibert/experiments).
"""

import os
import platform


def describe_cpu():
    """e.g. "AMD EPYC, AVX-512, 2 cores (Linux x86_64)": model, widest vector ISA, cores."""
    model, flags = platform.processor() or platform.machine(), set()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as file:
            for line in file:
                key, _, value = line.partition(":")
                if key.strip() == "model name":
                    model = value.strip()
                elif key.strip() == "flags":
                    flags = set(value.split())
    except OSError:
        pass  # not Linux: the model from platform, the ISA unknown
    isa = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "ISA unknown"
    return f"{model}, {isa}, {os.cpu_count()} cores ({platform.system()} {platform.machine()})"
