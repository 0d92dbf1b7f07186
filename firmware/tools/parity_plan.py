#!/usr/bin/env python3
"""Plan of the QEMU parity runs (used by scripts/qemu_parity.sh).

    parity_plan.py GOLDEN [--full] [--only=CFG,...] [--boards=BOARD,...]

Prints one job a line:  CONFIG BOARD TARGET OFFSET SELECT GENERATE
  BOARD    microbit | mps2-an385 | mps2-an386 | mps2-an500
  TARGET   Rust target of the library linked into that firmware
  OFFSET   0, or 1 for the odd-address variant (blob at address 1 mod 4)
  SELECT   case selection for gen_cases.py (all, first:N, maxlen:N, list)
  GENERATE 1 to include the golden atome_generate calls

Every golden case of every configuration runs on every MPS2 board. The
micro:bit jobs are planned for every configuration; the link decides
whether state + 2 KiB of stack fit its 16 KiB of RAM and the blobs + code
its 256 KiB of flash (the script reports the ones that do not fit as
skipped, with the reason).

Budget (default, ~6 minutes on 2 cores): the 944K model's cases cost 0.3 to
1.3 billion Cortex-M instructions each (4x more on soft-float M3), so by
default the M3 runs its shortest cases and the odd-address variant a few;
the long generate calls of the S=64 models run only on the M4F.
--full runs everything everywhere (about an hour).
"""
import json
import sys

golden = json.load(open(sys.argv[1]))
full = "--full" in sys.argv[2:]
only = [a.split("=", 1)[1].split(",") for a in sys.argv[2:] if a.startswith("--only=")]
only = only[0] if only else None
boards_only = [a.split("=", 1)[1].split(",") for a in sys.argv[2:] if a.startswith("--boards=")]
boards_only = boards_only[0] if boards_only else None

BOARDS = [
    ("microbit", "thumbv6m-none-eabi"),
    ("mps2-an385", "thumbv7m-none-eabi"),
    ("mps2-an386", "thumbv7em-none-eabihf"),
    ("mps2-an500", "thumbv7em-none-eabi"),
]
ODD_BOARDS = ("microbit", "mps2-an386")

BIG = ("m944k", "m944k_s24")      # 944K model: D=256, L=8
LONG_GEN = ("toy",)               # S=64 generate calls (64 predicts each)

for cfg in golden:
    if only and cfg not in only:
        continue
    for board, target in BOARDS:
        if boards_only and board not in boards_only:
            continue
        for off in (0, 1):
            if off == 1 and board not in ODD_BOARDS and not full:
                continue
            sel, gen = "all", 1
            if not full:
                if cfg in BIG:
                    gen = 0
                    if board == "mps2-an385":
                        sel = "maxlen:4"          # soft float: shortest cases only
                    elif board == "mps2-an500":
                        sel = "maxlen:16"         # soft float on the M7 build
                    elif off == 1:
                        sel = "maxlen:8"
                if cfg in LONG_GEN and board != "mps2-an386":
                    gen = 0
            print(cfg, board, target, off, sel, gen)
