"""Proposers: where candidates come from (an LLM, the tuner, an earlier run, a folder)."""
