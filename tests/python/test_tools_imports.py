"""tools/ keeps its layout (tools/README.md, "Files" and "Imports"): every script lives in a folder by job, and
everything under tools/ is imported through its package (`from data import dates_data`), never as a flat sibling
(`import dates_data`), which works only when the importer happens to sit in the same folder and then loads a second
copy of the module."""

import ast
import os
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOLS = os.path.join(ROOT, "tools")
FOLDERS = {"attnscope_tools", "data", "measure", "references", "training"}
# Outside tools/, the Python that imports from it.
IMPORTERS = [os.path.join(ROOT, "tests", "python"), os.path.join(ROOT, "bench")]


def python_files(top):
    for folder, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        yield from (os.path.join(folder, f) for f in sorted(files) if f.endswith(".py"))


def flat_imports(path, modules):
    """(line, name) of each import in `path` whose first part names a module inside a tools/ folder."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        yield from ((node.lineno, n) for n in names if n.split(".")[0] in modules)


class ToolsLayoutTest(unittest.TestCase):
    def test_every_python_file_is_in_a_folder_by_job(self):
        for name in sorted(os.listdir(TOOLS)):
            path = os.path.join(TOOLS, name)
            if os.path.isdir(path):
                self.assertTrue(name in FOLDERS or name in ("records", "__pycache__"), f"tools/{name}/: not a folder of tools/README.md")
            else:
                self.assertFalse(name.endswith((".py", ".mjs")), f"tools/{name}: put it in one of {sorted(FOLDERS)}")
        for folder in FOLDERS:
            self.assertTrue(os.path.exists(os.path.join(TOOLS, folder, "__init__.py")), f"tools/{folder}/ is a package")

    def test_tools_modules_are_imported_through_their_package(self):
        modules = {os.path.splitext(os.path.basename(p))[0] for p in python_files(TOOLS)} - {"__init__"}
        self.assertIn("dates_data", modules)
        bad = []
        for top in [TOOLS] + IMPORTERS:
            for path in python_files(top):
                bad += [f"{os.path.relpath(path, ROOT)}:{line}: {name}" for line, name in flat_imports(path, modules)]
        self.assertEqual(bad, [], "flat imports of tools modules (import them through their folder's package)")


if __name__ == "__main__":
    unittest.main()
