"""Settings, from three sources in this order: flags > environment > [tool.kernelgen] in the
project's pyproject.toml.

Environment: KERNELGEN_<FIELD> for every field (KERNELGEN_MODEL, KERNELGEN_BASE_URL, ...), and the
usual OPENAI_BASE_URL / OPENAI_API_KEY / OPENAI_MODEL for the endpoint.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kernelgen import paths
from kernelgen.errors import UsageError, first_error

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    temperature: float = 0.7
    max_tokens: int = Field(8192, description="per reply")
    request_timeout_s: float = 300.0
    max_retries: int = 4
    price_in_per_mtok: float | None = Field(None, description="USD per million prompt tokens")
    price_out_per_mtok: float | None = Field(None, description="USD per million reply tokens")

    @property
    def llm_configured(self) -> bool:
        return bool(self.model and self.base_url)


_OPENAI_ENV = {"base_url": "OPENAI_BASE_URL", "api_key": "OPENAI_API_KEY", "model": "OPENAI_MODEL"}


def _from_pyproject() -> dict[str, Any]:
    try:
        path = paths.root() / "pyproject.toml"
    except UsageError:
        return {}
    if not path.is_file():
        return {}
    try:
        table = tomllib.loads(path.read_text()).get("tool", {}).get("kernelgen", {})
    except tomllib.TOMLDecodeError as e:
        raise UsageError(f"{path}: not valid TOML: {e}") from None
    return {k.replace("-", "_"): v for k, v in table.items()}


def _from_env() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in Settings.model_fields:
        if name in _OPENAI_ENV and os.environ.get(_OPENAI_ENV[name]):
            out[name] = os.environ[_OPENAI_ENV[name]]
        value = os.environ.get(f"KERNELGEN_{name.upper()}")
        if value:
            out[name] = value
    return out


def load_settings(**flags: Any) -> Settings:
    merged: dict[str, Any] = {}
    for source, values in (
        ("pyproject.toml [tool.kernelgen]", _from_pyproject()),
        ("environment", _from_env()),
        ("flags", {k: v for k, v in flags.items() if v is not None}),
    ):
        merged.update(values)
        try:
            Settings.model_validate(merged)
        except ValidationError as e:
            raise UsageError(f"{source}: {first_error(e)}") from None
    return Settings.model_validate(merged)
