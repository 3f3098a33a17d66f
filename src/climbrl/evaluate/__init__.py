"""Evaluation: matches, seat rotation, duplicate deals, confidence intervals, tournaments."""
