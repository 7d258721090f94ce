"""What the scripts in tools/ share: the model files (attnscope_model, on safetensors_file), their config table
(config), the NumPy reference passes (reference), process set-up (runtime), the learning-rate schedule (schedule),
head analysis naming and result tables (heads), the tokenisers the model files name (tokenizers), what a run writes
(records) and where (paths).

Every script puts tools/ on sys.path and imports through the folders' packages (tools/README.md, "Imports").

Importing the package turns off bytecode caching for every module imported after it, so tools/ stays free of
__pycache__; the scripts import it before their other local modules. (Python caches a module before running it, so
this file's own cache cannot be avoided from here; .gitignore covers it.)
"""

import sys

sys.dont_write_bytecode = True
