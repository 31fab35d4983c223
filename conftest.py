"""Root conftest: registers the harness pytest plugin (options must live in a root conftest
or a plugin, pytest only reads ``pytest_addoption`` from initial conftests)."""

pytest_plugins = ["harness.plugin"]
