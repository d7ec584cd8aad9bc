"""A small `sglang/srt/environ.py` shaped like the releases' (EnvField, EnvBool, EnvInt and
the `envs` registry), for the tests that build tiny source trees."""

ENVIRON = '''
import os
import warnings


class EnvField:
    def __init__(self, default):
        self.default = default

    def __set_name__(self, owner, name):
        self.name = name

    def get(self):
        value = os.getenv(self.name)
        if value is None:
            return self.default
        try:
            return self.parse(value)
        except ValueError as e:
            warnings.warn(f"Invalid value for {self.name}: {e}")
            return self.default

    def is_set(self):
        return self.name in os.environ

    def set(self, value):
        os.environ[self.name] = str(value)


class EnvBool(EnvField):
    def parse(self, value):
        value = value.lower()
        if value in ["true", "1", "yes", "y"]:
            return True
        if value in ["false", "0", "no", "n"]:
            return False
        raise ValueError(f'"{value}" is not a valid boolean value')


class EnvInt(EnvField):
    def parse(self, value):
        try:
            return int(value)
        except ValueError:
            raise ValueError(f'"{value}" is not a valid integer value')


class Envs:
    SGLANG_FAST = EnvBool(False)
    SGLANG_LIMIT = EnvInt(4 * 1024)
    SGLANG_LATER = EnvBool(False)


envs = Envs()
'''
