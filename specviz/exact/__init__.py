"""Exact math: the rules, their output laws and the cost model, enumerated with numpy."""
