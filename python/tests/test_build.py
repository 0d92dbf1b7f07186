"""atome.build_library / config naming / Engine basics."""

from __future__ import annotations

import pytest

import atome
from conftest import CONFIGS


def test_normalize_config_spellings():
    a = atome.normalize_config({"V": 40, "D": 22, "L": 3, "DH": 6, "K": 3, "TOPK": 2, "S": 16})
    b = atome.normalize_config({"vocab_size": 40, "d_model": 22, "n_layers": 3, "d_head": 6,
                                "kernel_size": 3, "top_k": 2, "max_seq": 16})
    c = atome.normalize_config({"ATOME_VOCAB_SIZE": 40, "ATOME_D_MODEL": 22, "ATOME_N_LAYERS": 3,
                                "ATOME_D_HEAD": 6, "ATOME_KERNEL_SIZE": 3, "ATOME_TOP_K": 2,
                                "ATOME_MAX_SEQ": 16})
    assert a == b == c
    assert a["max_classes"] == 16 and a["n_pathways"] == 3
    assert atome.normalize_config({}) == atome.normalize_config(
        {"V": 256, "D": 64, "L": 4, "DH": 16, "K": 5, "TOPK": 4, "S": 32})
    with pytest.raises(ValueError):
        atome.normalize_config({"DMODEL": 3})


def test_config_name():
    assert atome.config_name({}) == "D64_DH16_K5_L4_S32_TOPK4_V256_lean_default"
    assert atome.config_name(CONFIGS["m944k"], cached=True, system_libm=True) == \
        "D256_DH64_K5_L8_S64_TOPK4_V256_cached_system"
    assert atome.config_name(CONFIGS["weird"]) == "D13_DH3_K2_L1_S9_TOPK1_V37_MC5_lean_default"


def test_build_config_and_atome_lib(lib, monkeypatch):
    eng = lib("weird")
    c = eng.config
    assert (c["vocab_size"], c["d_model"], c["n_layers"], c["d_head"], c["kernel_size"], c["top_k"],
            c["max_seq"], c["max_classes"], c["n_pathways"], c["state_cached"]) == (37, 13, 1, 3, 2, 1, 9, 5, 3, 0)
    assert c["state_size"] >= 4 * 37 and c["model_size"] > 0 and c["classifier_size"] > c["model_size"]
    assert eng.path.endswith("libatome.so")
    assert "/target/cfg/D13_DH3_K2_L1_S9_TOPK1_V37_MC5_lean_default/" in eng.path
    # $ATOME_LIB is used when it matches, ignored otherwise
    monkeypatch.setenv("ATOME_LIB", eng.path)
    assert atome.build_library(CONFIGS["weird"]) == eng.path
    assert atome.Engine().path == eng.path
    other = atome.build_library(CONFIGS["tiny"])
    assert other != eng.path and atome.Engine(other).config["vocab_size"] == 32
    assert lib("odd", cached=True).config["state_cached"] == 1
