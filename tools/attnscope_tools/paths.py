"""Where the tools read and write: the repository's root, tools/ and its records/, named once here so that no
script counts its own folder's depth."""

import os

TOOLS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(TOOLS)
RECORDS = os.path.join(TOOLS, "records")
