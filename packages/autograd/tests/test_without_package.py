"""The core without flambeau-autograd: requires_grad exists, gradients name the package."""

import subprocess
import sys
import textwrap


def test_core_alone_names_the_package(tmp_path):
    # Hide flambeau.autograd by a meta-path finder that refuses it, in a fresh interpreter.
    code = textwrap.dedent(
        """
        import sys, importlib.abc
        class Hide(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.startswith("flambeau.autograd"):
                    raise ImportError("hidden for the test")
        sys.meta_path.insert(0, Hide())
        import flambeau
        x = flambeau.ones(2, requires_grad=True)
        y = (x * 2).sum()
        assert y.grad_fn is None
        try:
            y.backward()
        except RuntimeError as e:
            assert "flambeau-autograd" in str(e), e
            print("ok")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr
