"""What the scripts in tools/ share: process set-up (runtime), the learning-rate schedule (schedule), head analysis
naming and result tables (heads), and the tokenisers the model files name (tokenizers).

Importing the package turns off bytecode caching for every module imported after it, so tools/ stays free of
__pycache__; the scripts import it before their other local modules. (Python caches a module before running it, so
this file's own cache cannot be avoided from here; .gitignore covers it.)
"""

import sys

sys.dont_write_bytecode = True
