"""Evaluation: AILA-format datasets, measures, systems, reports and benchmarks."""
