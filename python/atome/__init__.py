"""atome: Python (ctypes) binding of the atome inference library.

Any model, through the library that `pip install ./python` built into the
package (the runtime-dimension API; no cargo needed after install):

    import atome
    m = atome.load("atome_944k.bin")   # or an ATOMEF container, or bytes
    print(m.generate(b"Once upon a time", 40))
    q = atome.load("atome_944k.bin", dtype="q15", cached=True)  # the q15 integer mode, cached plan

The per-configuration path (compile-time knobs, used by the tests of that
build):

    import atome
    path = atome.build_library({"V": 256, "D": 64, "L": 4, "DH": 16, "K": 5, "TOPK": 4, "S": 64})
    eng = atome.Engine(path)
    model = atome.Model.load(open("model_toy.atome", "rb").read(), engine=eng)
    model.generate(b"Once upon a ", 16)

No compiled extension: the library is built by cargo (build_library) and
loaded with ctypes.
"""

from ._build import BuildError, build_library, config_name, normalize_config, repo_root
from ._engine import AtomeError, BuildConfig, Classifier, Engine, Model, Sampling
from ._infer import InferError
from ._runtime import Dims, RtModel, Text, infer_dims, load, make_container, read_container_header

__all__ = [
    "AtomeError", "BuildConfig", "BuildError", "Classifier", "Engine", "Model", "Sampling",
    "build_library", "config_name", "normalize_config", "repo_root",
    "Dims", "InferError", "RtModel", "Text", "infer_dims", "load", "make_container", "read_container_header",
]
__version__ = "0.1.0"
