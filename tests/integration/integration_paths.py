"""Paths the integration tests share (a module of its own: conftest names collide across test folders)."""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
