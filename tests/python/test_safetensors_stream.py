"""safetensors_file.save_stream (the writer of tools/references/make_bf16_models.py's 2.5 GB file, one tensor at a
time) writes the bytes encode() writes for the same tensors, each producer called once, in data order; a producer
whose bytes do not fit its shape fails. Standard library only.
Run: /usr/bin/python3 -m unittest discover tests/python"""

import os
import struct
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import attnscope_tools  # noqa: E402,F401  (first: no __pycache__ in tools/)
from attnscope_tools import safetensors_file as st  # noqa: E402


class SaveStreamTest(unittest.TestCase):
    def test_same_bytes_as_encode(self):
        tensors = [("b.weight", [[1.5, -2.0, 0.1], [3.0, 1e-3, -7.25]]), ("a.bias", [0.5, -0.333]), ("n", [[2.0], [4.0]])]
        dtypes = {"b.weight": "BF16", "a.bias": "F16"}
        want = st.encode(tensors, {"format": "pt"}, dtypes)
        calls = []

        def producer(name, value):
            def produce():
                calls.append(name)
                raw = st.encode([(name, value)], None, {name: dtypes.get(name, "F32")})
                (n,) = struct.unpack("<Q", raw[:8])
                return raw[8 + n:]  # this tensor's data alone
            return produce
        entries = [(name, dtypes.get(name, "F32"), [len(v)] + ([len(v[0])] if isinstance(v[0], list) else []), producer(name, v))
                   for name, v in tensors]
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "m.safetensors")
            written = st.save_stream(path, entries, {"format": "pt"})
            with open(path, "rb") as f:
                got = f.read()
        self.assertEqual(calls, ["b.weight", "a.bias", "n"])
        self.assertEqual(written, len(want))
        self.assertEqual(got, want)
        _, read = st.decode(got, allow=st.WRITABLE)
        self.assertEqual(list(read["b.weight"].values), [1.5, -2.0, 0.10009765625, 3.0, 0.00099945068359375, -7.25])

    def test_a_producer_of_the_wrong_size_fails(self):
        with tempfile.TemporaryDirectory() as tmp:
            with self.assertRaisesRegex(ValueError, r"x: 6 bytes produced for shape \[2\] of BF16 \(4 expected\)"):
                st.save_stream(os.path.join(tmp, "m.safetensors"), [("x", "BF16", [2], lambda: b"\0" * 6)])


if __name__ == "__main__":
    unittest.main()
