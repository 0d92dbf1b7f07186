#!/usr/bin/env python3
"""Plan of the QEMU parity runs (used by scripts/qemu_parity.sh).

    parity_plan.py GOLDEN [--q15] [--full] [--only=CFG,...] [--boards=BOARD,...]

Prints one job a line:  CONFIG BOARD TARGET OFFSET SELECT GENERATE
  BOARD    microbit | mps2-an385 | mps2-an386 | mps2-an500 | mps2-an505 | riscv-virt
  TARGET   Rust target of the library linked into that firmware
  OFFSET   0, or 1 for the odd-address variant (blob at address 1 mod 4)
  SELECT   case selection for gen_cases.py (all, first:N, maxlen:N, list)
  GENERATE 1 to include the golden atome_generate calls

Every golden case of every configuration runs on every MPS2 board and on
QEMU's RISC-V virt machine (riscv32imc with the blob at an odd address;
riscv32imac for the small configurations). The
micro:bit jobs are planned for every configuration; the link decides
whether state + 2 KiB of stack fit its 16 KiB of RAM and the blobs + code
its 256 KiB of flash (the script reports the ones that do not fit as
skipped, with the reason).

Budget (default, under 5 minutes on 2 idle cores): everything runs except
  - the 944K model's generate calls (each is 40 to 60 predicts of up to 64
    tokens, about a minute apiece even on the M4F);
  - on the soft-float builds (M3, M7 soft, RISC-V) the 944K model runs only its
    cases of at most 16 tokens (S=64) or 12 tokens (S=24), and the
    odd-address M4F run and the M33 run of the S=64 model its cases of at
    most 16 tokens;
  - the toy model's generate calls (S=64) run on the aligned M4F build only.
--full runs everything everywhere (more than an hour).

--q15: the plan of the q15 build (ATOME_DTYPE=q15). Same boards and
address variants; its smaller state fits more boards (the link decides).
Its budget (default; about 4 minutes on 2 idle cores, 3.5 of them cargo):
every case of every configuration on every board, and the generate calls
of every configuration except the long ones (the 944K model's and the toy
model's at S=64: 40 to 60 predicts of up to 64 tokens each), which run only
on the aligned M4F, and only for the S=24 944K model (the S=64 one takes
two minutes there). The integer engine's cost hardly depends on the FPU,
so the soft-float cores get the same selection as the others.
"""
import json
import sys

golden = json.load(open(sys.argv[1]))
full = "--full" in sys.argv[2:]
q15 = "--q15" in sys.argv[2:]
only = [a.split("=", 1)[1].split(",") for a in sys.argv[2:] if a.startswith("--only=")]
only = only[0] if only else None
boards_only = [a.split("=", 1)[1].split(",") for a in sys.argv[2:] if a.startswith("--boards=")]
boards_only = boards_only[0] if boards_only else None

BOARDS = [
    ("microbit", "thumbv6m-none-eabi"),
    ("mps2-an385", "thumbv7m-none-eabi"),
    ("mps2-an386", "thumbv7em-none-eabihf"),
    ("mps2-an500", "thumbv7em-none-eabi"),
    ("mps2-an505", "thumbv8m.main-none-eabihf"),
    ("riscv-virt", "riscv32imc-unknown-none-elf"),
    ("riscv-virt", "riscv32imac-unknown-none-elf"),
]
ODD_BOARDS = ("microbit", "mps2-an386")
SMALL = ("tiny", "odd", "wide", "cls", "cls_odd")

BIG = ("m944k", "m944k_s24")              # 944K model: D=256, L=8
SOFT_BIG = ("mps2-an385", "mps2-an500", "riscv-virt")   # soft-float builds
LONG_GEN = ("toy",)                       # S=64 generate calls (up to 64 predicts each)

for cfg in golden:
    if only and cfg not in only:
        continue
    for board, target in BOARDS:
        if boards_only and board not in boards_only:
            continue
        for off in (0, 1):
            if board == "riscv-virt" and not full:
                # riscv32imc: every configuration, blob at an odd address;
                # riscv32imac: the small configurations, aligned.
                if target.startswith("riscv32imc-") and off == 0:
                    continue
                if target.startswith("riscv32imac-") and (off == 1 or cfg not in SMALL):
                    continue
            elif off == 1 and board not in ODD_BOARDS and not full:
                continue
            sel, gen = "all", 1
            if q15 and not full:
                if cfg == "m944k" or (cfg in BIG + LONG_GEN and (board != "mps2-an386" or off == 1)):
                    gen = 0
            elif not full:
                if cfg in BIG:
                    gen = 0
                    if board in SOFT_BIG:
                        sel = "maxlen:16" if cfg == "m944k" else "maxlen:12"
                    elif (off == 1 or board == "mps2-an505") and cfg == "m944k":
                        sel = "maxlen:16"
                if cfg in LONG_GEN and (board != "mps2-an386" or off == 1):
                    gen = 0
            print(cfg, board, target, off, sel, gen)
