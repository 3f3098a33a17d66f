"""Prefect flows, one per stage, and the parent flow (filled in by the pipeline issue)."""
