"""Only here for cffi: ``cffi_modules`` has no pyproject.toml form. Metadata is in pyproject."""

from setuptools import setup

setup(cffi_modules=["engine_c/build_engine.py:ffi"])
